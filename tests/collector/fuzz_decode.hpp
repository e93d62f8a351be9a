// One fuzz input for the collector's decoder, shared by the libFuzzer target
// (fuzz_decode.cpp, built with clang++-14) and the corpus replay test (every build).
//
// Property: decode() either throws ProtocolError or returns a message that re-encodes
// and decodes to the same bytes. Anything else (another exception, a crash, a read out
// of bounds under a sanitizer) is a bug; the property violation returns false.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "rewind/collector/messages.hpp"

namespace rwd::collector::test {

inline bool fuzz_one(const std::uint8_t* data, std::size_t size) {
  const auto in = std::as_bytes(std::span(data, size));
  // As the server reads requests, and as a client reads (small-capped) replies.
  for (const Limits limits : {kRequestLimits, Limits{std::uint64_t{1} << 24, std::uint64_t{1} << 24}}) {
    Message m;
    try {
      m = decode(in, limits);
    } catch (const ProtocolError&) {
      continue;
    }
    const auto again = encode(m);
    const Message back = decode(again);
    if (encode(back) != again || back.body.index() != m.body.index() || back.request_id != m.request_id) return false;
  }
  return true;
}

}  // namespace rwd::collector::test
