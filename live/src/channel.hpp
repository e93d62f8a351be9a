// The in-process channel between a collector thread and compute rank 0's main thread
// (the Catalyst Live model, link.hpp): frames both ways, and for a window the places
// of the reply's arrays, which rank 0 fills (its own cells directly, the other ranks'
// as it receives them). Private to rewind::live.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "rewind/live/tree.hpp"

namespace rwd::live {

/// Where a window's cells go: values[v] + piece offset, types + piece offset.
struct WindowTarget {
  std::vector<double*> values;
  std::uint8_t* types = nullptr;
};

class ThreadChannel {
 public:
  struct Command {
    std::vector<std::byte> frame;
    WindowTarget target;  ///< for a window command
  };
  void push_command(Command c) {
    const std::lock_guard lock(mutex_);
    commands_.push_back(std::move(c));
  }
  std::optional<Command> pop_command() { return pop(commands_); }
  void push_reply(std::vector<std::byte> f) {
    const std::lock_guard lock(mutex_);
    replies_.push_back(std::move(f));
  }
  std::optional<std::vector<std::byte>> pop_reply() { return pop(replies_); }
  void push_status(std::vector<std::byte> f) {
    const std::lock_guard lock(mutex_);
    statuses_.push_back(std::move(f));
  }
  std::optional<std::vector<std::byte>> pop_status() { return pop(statuses_); }
  /// The run's trees, as rank 0 last gathered each future's (for the collector's selections).
  void set_tree(std::shared_ptr<const TreeSnapshot> t) {
    const std::lock_guard lock(mutex_);
    trees_.put(std::move(t));
  }
  std::shared_ptr<const TreeSnapshot> tree(const std::string& file) {
    const std::lock_guard lock(mutex_);
    return trees_.get(file);
  }

 private:
  template <class T>
  std::optional<T> pop(std::deque<T>& q) {
    const std::lock_guard lock(mutex_);
    if (q.empty()) return std::nullopt;
    T v = std::move(q.front());
    q.pop_front();
    return v;
  }
  std::mutex mutex_;
  std::deque<Command> commands_;
  std::deque<std::vector<std::byte>> replies_, statuses_;
  TreeStore trees_;
};

}  // namespace rwd::live
