// The live link's frame format (messages.hpp): one definition for every frame kind.
#pragma once
#include "rewind/live/messages.hpp"
#include "rewind/wire/wire.hpp"

namespace rwd::live::detail {
inline const wire::FrameFormat& frame_format() {
  static const wire::FrameFormat f{{'R', 'W', 'L', 'V'}, kVersion, std::uint64_t{1} << 31, "live link"};
  return f;
}
inline constexpr const char* kWho = "live link";
}  // namespace rwd::live::detail
