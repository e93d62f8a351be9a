// The row hashes with AVX2 (this file is built with -mavx2; kernel/CMakeLists.txt), run
// only on CPUs that have it (checksum.cpp): see xxh3_rows.hpp.
#define REWIND_XXH3_ISA avx2
#include "integrity/xxh3_rows.hpp"
