// The row hashes for any x86-64 (or other) CPU: see xxh3_rows.hpp.
#define REWIND_XXH3_ISA base
#include "integrity/xxh3_rows.hpp"
