// Where a live window's arrays live while a connection writes them (relay.cpp):
// at most two segments shared with the compute ranks of this node (memory.hpp), which
// extract their cells straight into them, and at most two written replies whose arrays
// the next windows reuse (no zero fill, no fresh pages). Private to rewind::live.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "rewind/collector/messages.hpp"
#include "rewind/live/memory.hpp"

namespace rwd::live {

class ReplySlots {
 public:
  /// A segment shared with the compute ranks of this node, holding one reply's arrays
  /// while a connection writes them.
  struct Slot {
    SharedSegment segment;
    std::atomic<bool> busy{false};
  };

  ReplySlots() { pool_.reserve(kPoolReplies); }  // recycle() does not allocate

  /// A free slot of at least `bytes`, marked busy (free again once `keep` of the reply
  /// made on it is gone); null when both are busy (slow clients still reading) or the
  /// memory cannot be had: the window then goes through the reply's own arrays. Core
  /// thread.
  std::shared_ptr<Slot> take(std::uint64_t bytes);
  /// The names of the slots, for the compute ranks to map.
  std::vector<std::uint64_t> tokens();
  /// Moves the arrays of a kept reply into `out` (values and cell_type), if one is kept.
  void reuse_arrays(collector::WindowReply& out);
  /// Keeps the arrays of a written reply for the next live window (I/O thread).
  void recycle(collector::WindowReply&& w) noexcept;
  /// Frees the kept replies (their arrays); the shared slots stay (at most two).
  void release_pool() noexcept;

 private:
  static constexpr std::size_t kPoolReplies = 2;
  static constexpr std::uint64_t kPoolBytes = std::uint64_t{256} << 20;  ///< per kept reply
  std::mutex mutex_;
  std::vector<collector::WindowReply> pool_;  ///< written replies whose arrays the next windows reuse
  std::vector<std::shared_ptr<Slot>> slots_;  ///< at most kPoolReplies
  bool no_slots_ = false;                     ///< creating one failed: not tried again
};

}  // namespace rwd::live
