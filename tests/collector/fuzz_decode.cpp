// libFuzzer target for the collector's frame decoder, compiled with clang++-14 whatever
// compiler builds the rest (target collector_fuzz_decode, tests/collector/CMakeLists.txt);
// ctest runs it 25 s on a copy of the seeds (collector_fuzz). A longer campaign:
//   mkdir /tmp/c && cp tests/collector/corpus/* /tmp/c
//   build/tests/collector/fuzz/collector_fuzz_decode -max_total_time=600 /tmp/c
#include <cstdlib>

#include "fuzz_decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!rwd::collector::test::fuzz_one(data, size)) std::abort();
  return 0;
}
