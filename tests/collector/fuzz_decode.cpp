// libFuzzer target for the collector's frame decoder (built only with clang, see
// tests/collector/CMakeLists.txt). Run:
//   build-fuzz/tests/collector/collector_fuzz_decode -max_total_time=60 tests/collector/corpus
#include <cstdlib>

#include "fuzz_decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!rwd::collector::test::fuzz_one(data, size)) std::abort();
  return 0;
}
