// Where a live window's arrays live while a connection writes them (reply_slots.hpp).
#include "reply_slots.hpp"

#include <system_error>

namespace rwd::live {

std::shared_ptr<ReplySlots::Slot> ReplySlots::take(std::uint64_t bytes) {
  if (bytes > kPoolBytes || no_slots_) return nullptr;
  const std::lock_guard lock(mutex_);
  std::shared_ptr<Slot>* spare = nullptr;
  for (auto& s : slots_) {
    if (s->busy.load()) continue;
    if (s->segment.bytes() >= bytes) {
      s->busy = true;
      return s;
    }
    spare = &s;
  }
  if (spare == nullptr && slots_.size() >= kPoolReplies) return nullptr;
  try {
    // Rounded up to 4 MiB, so that windows of about one size share one segment.
    auto s = std::make_shared<Slot>();
    s->segment = SharedSegment::create((bytes + (std::uint64_t{4} << 20) - 1) & ~((std::uint64_t{4} << 20) - 1));
    s->busy = true;
    if (spare != nullptr) *spare = s;  // the old one is unmapped once no reply holds it
    else slots_.push_back(s);
    return s;
  } catch (const std::system_error&) {
    no_slots_ = true;  // e.g. no memfd here: every window takes the MPI path
    return nullptr;
  }
}

std::vector<std::uint64_t> ReplySlots::tokens() {
  const std::lock_guard lock(mutex_);
  std::vector<std::uint64_t> out;
  for (const auto& s : slots_) out.push_back(s->segment.name().token);
  return out;
}

void ReplySlots::reuse_arrays(collector::WindowReply& out) {
  const std::lock_guard lock(mutex_);
  if (pool_.empty()) return;
  out.values = std::move(pool_.back().values);
  out.cell_type = std::move(pool_.back().cell_type);
  pool_.pop_back();
}

void ReplySlots::recycle(collector::WindowReply&& w) noexcept {
  if (w.shared) return;  // its slot is free again once the reply is gone
  std::uint64_t bytes = w.cell_type.capacity();
  for (const auto& v : w.values) bytes += 8 * v.capacity();
  const std::lock_guard lock(mutex_);
  if (pool_.size() < kPoolReplies && bytes <= kPoolBytes) pool_.push_back(std::move(w));
}

void ReplySlots::release_pool() noexcept {
  const std::lock_guard lock(mutex_);
  pool_.clear();
}

}  // namespace rwd::live
