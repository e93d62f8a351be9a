// The relay's link to the compute ranks (relay.cpp): commands out, replies and the
// run's status in, over MPI (a collector rank) or the in-process channel (a collector
// thread of compute rank 0); the run's status and tree as last received. The relay's
// thread, except the status accessors. Private to rewind::live.
#pragma once
#include <mpi.h>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "channel.hpp"
#include "rewind/live/messages.hpp"
#include "rewind/live/relay.hpp"

namespace rwd::live {

class ComputeLink {
 public:
  using Bytes = std::vector<std::byte>;
  /// Rank mode: the compute root is service rank layout.first_compute.
  explicit ComputeLink(const RankLayout& layout) : layout_(layout) {}
  /// Thread mode: the compute root is this process's main thread, behind `channel`.
  ComputeLink(std::shared_ptr<ThreadChannel> channel, int compute_size) : channel_(std::move(channel)) {
    layout_.compute_size = compute_size;
  }

  [[nodiscard]] bool thread_mode() const { return channel_ != nullptr; }
  [[nodiscard]] const RankLayout& layout() const { return layout_; }

  /// A command to the compute ranks, answered at their next boundary (waits for it).
  Reply command(const Command& c, WindowTarget target = {});
  /// Sends a command without waiting; its reply comes through poll_reply.
  void send_command(const Command& c, WindowTarget target);
  /// The reply to the last command, if it has come.
  bool poll_reply(Reply& reply);
  /// Takes in every status (and, rank mode, tree) frame the compute root has sent.
  void drain_status();
  /// The longest nap while a command's reply is due (reply_nap, now).
  std::chrono::microseconds reply_nap_cap();

  /// The run's last status and its steps per second.
  std::pair<Status, double> status();
  /// Changes the status kept (a steering reply is newer than the run's last status).
  template <class F>
  void update_status(F f) {
    const std::lock_guard lock(mutex_);
    f(status_);
  }
  bool finished();
  /// True once the compute root has sent a status (its first boundary: the files it writes).
  bool described();
  /// The tree of the future writing `file` as the compute ranks last gathered it ("" or
  /// none of its own: the latest; null before the first).
  std::shared_ptr<const TreeSnapshot> tree(const std::string& file);

 private:
  std::optional<Bytes> try_receive(int tag);
  void take_status(Status s);

  RankLayout layout_;
  std::shared_ptr<ThreadChannel> channel_;
  std::deque<std::pair<Bytes, MPI_Request>> sent_;  ///< rank mode: commands in flight
  std::mutex mutex_;                                ///< guards what follows
  Status status_;
  bool finished_ = false;
  TreeStore trees_;  ///< rank mode
  double rate_ = 0.0, rate_wall_ = 0.0;
  std::int64_t rate_steps_ = 0;
  std::chrono::steady_clock::time_point status_at_{};  ///< when the last status came
};

/// The longest nap while a command's reply is due. A paused run answers at once: 0.1 ms.
/// A running one at its next step boundary, up to a step away: 2 ms naps (a wake-up per
/// 2 ms costs the compute ranks' cores little) until 4 ms before the boundary is due
/// (`since_status` seconds after the last status, which the root sends at a boundary,
/// and 1 / `rate` seconds per step), then 0.1 ms: a 2 ms nap no longer ends up to 2 ms
/// after the reply came. Without a rate yet, 2 ms.
std::chrono::microseconds reply_nap(collector::RunState state, double rate, double since_status);

}  // namespace rwd::live
