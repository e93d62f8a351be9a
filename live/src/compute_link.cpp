// The relay's link to the compute ranks (compute_link.hpp).
#include "compute_link.hpp"

#include "rewind/live/link.hpp"
#include "rewind/mpi/backoff.hpp"

namespace rwd::live {
using collector::RunState;

Reply ComputeLink::command(const Command& c, WindowTarget target) {
  send_command(c, std::move(target));
  // The answer comes at the run's next step boundary, up to a whole step away: poll
  // often at first (a paused run answers at once), then back off to 2 ms.
  Reply reply;
  mpi::wait_until(
      [&] {
        if (poll_reply(reply)) return true;
        drain_status();
        return false;
      },
      {.spin = std::chrono::microseconds(0), .first = std::chrono::microseconds(50), .cap = reply_nap_cap()});
  return reply;
}

void ComputeLink::send_command(const Command& c, WindowTarget target) {
  Bytes frame = encode(c);
  if (thread_mode()) {
    channel_->push_command({std::move(frame), std::move(target)});
    return;
  }
  // Not MPI_Send: a window's command (its piece list) is beyond the eager limit, so a
  // blocking send waited for the root's receive at its next step boundary, spinning
  // through sched_yield for up to a whole step. The reply can only follow the receive.
  sent_.emplace_back(std::move(frame), MPI_REQUEST_NULL);
  auto& s = sent_.back();
  MPI_Isend(s.first.data(), static_cast<int>(s.first.size()), MPI_BYTE, layout_.first_compute, kCommandTag,
            layout_.service, &s.second);
}

std::chrono::microseconds reply_nap(RunState state, double rate, double since_status) {
  using std::chrono::microseconds;
  if (state == RunState::paused) return microseconds(100);
  const bool due_soon = rate > 0 && since_status > 1.0 / rate - 0.004;
  return due_soon ? microseconds(100) : microseconds(2000);
}

std::chrono::microseconds ComputeLink::reply_nap_cap() {
  const std::lock_guard lock(mutex_);
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - status_at_).count();
  return reply_nap(status_.state, rate_, since);
}

/// The next frame from the compute root with `tag`, if one has come.
std::optional<ComputeLink::Bytes> ComputeLink::try_receive(int tag) {
  if (thread_mode()) return tag == kReplyTag ? channel_->pop_reply() : channel_->pop_status();
  const int root = layout_.first_compute;
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(root, tag, layout_.service, &flag, &st);
  if (!flag) return std::nullopt;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  Bytes b(static_cast<std::size_t>(n));
  MPI_Recv(b.data(), n, MPI_BYTE, root, tag, layout_.service, MPI_STATUS_IGNORE);
  return b;
}

bool ComputeLink::poll_reply(Reply& reply) {
  auto b = try_receive(kReplyTag);
  if (!b) return false;
  if (!thread_mode()) {  // complete: the root has received every command sent so far
    for (auto& s : sent_) MPI_Wait(&s.second, MPI_STATUS_IGNORE);
    sent_.clear();
  }
  reply = decode_reply(*b);
  return true;
}

void ComputeLink::drain_status() {
  while (auto b = try_receive(kStatusTag)) {
    if (!thread_mode() && frame_type(*b) == kTreeType) {
      const std::lock_guard lock(mutex_);
      trees_.put(std::make_shared<const TreeSnapshot>(decode_tree(*b)));
      continue;
    }
    take_status(decode_status(*b));
  }
}

void ComputeLink::take_status(Status s) {
  const std::lock_guard lock(mutex_);
  // Steps per second over the last second or more of wall time.
  if (s.wall - rate_wall_ >= 1.0) {
    rate_ = static_cast<double>(s.steps - rate_steps_) / (s.wall - rate_wall_);
    rate_wall_ = s.wall;
    rate_steps_ = s.steps;
  }
  if (s.state == RunState::paused) rate_ = 0.0;
  status_at_ = std::chrono::steady_clock::now();
  finished_ = s.state == RunState::finished;
  status_ = std::move(s);
}

std::pair<Status, double> ComputeLink::status() {
  const std::lock_guard lock(mutex_);
  return {status_, rate_};
}

bool ComputeLink::described() {
  const std::lock_guard lock(mutex_);
  return status_at_ != std::chrono::steady_clock::time_point{};
}

bool ComputeLink::finished() {
  const std::lock_guard lock(mutex_);
  return finished_;
}

std::shared_ptr<const TreeSnapshot> ComputeLink::tree(const std::string& file) {
  if (thread_mode()) return channel_->tree(file);
  const std::lock_guard lock(mutex_);
  return trees_.get(file);
}

}  // namespace rwd::live
