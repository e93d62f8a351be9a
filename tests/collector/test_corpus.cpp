// Replays the fuzz seed corpus (tests/collector/corpus) through the fuzz property in
// every build, so the decoder's behaviour on these inputs is checked without clang.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "fuzz_decode.hpp"

TEST_CASE("the fuzz corpus decodes or is refused with a ProtocolError, and what decodes round-trips", "[collector][fuzz]") {
  namespace fs = std::filesystem;
  std::size_t files = 0, accepted = 0;
  std::set<rwd::collector::MessageType> types;
  for (const auto& e : fs::directory_iterator(REWIND_COLLECTOR_CORPUS)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    CAPTURE(e.path().string());
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    CHECK(rwd::collector::test::fuzz_one(data, bytes.size()));
    // The seeds' names say what they are: ok_* decode, every other one is refused.
    const bool ok = e.path().filename().string().starts_with("ok_");
    try {
      types.insert(type_of(rwd::collector::decode(std::as_bytes(std::span(bytes))).body));
      ++accepted;
      CHECK(ok);
    } catch (const rwd::collector::ProtocolError&) {
      CHECK(!ok);
    }
    ++files;
  }
  CHECK(files >= 40);
  CHECK(types.size() == 20);  // the seeds include a valid frame of every message type
}
