// The row hashes with AVX-512 (this file is built with -mavx512f; kernel/CMakeLists.txt),
// run only on CPUs that have it (checksum.cpp): see xxh3_rows.hpp.
#define REWIND_XXH3_ISA avx512
#include "integrity/xxh3_rows.hpp"
