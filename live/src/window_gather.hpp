// A live window's cells, gathered from the compute ranks into the reply's arrays
// (relay.cpp): the command with the selection's pieces, the arrays placed in a
// shared slot or a kept reply's (reply_slots.hpp), and in rank mode the receives, run by
// run, streamed to the client as they complete (codec none). Core thread. Private to
// rewind::live.
#pragma once
#include "compute_link.hpp"
#include "reply_slots.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/live/relay.hpp"

namespace rwd::live {

class WindowGather {
 public:
  WindowGather(ComputeLink& link, ReplySlots& slots, RelayStats& stats) : link_(link), slots_(slots), stats_(stats) {}

  /// The window of `sel` (selected for `r`), its cells from the compute ranks at their
  /// next boundary; `stream` (may be null) writes the reply while the cells arrive.
  /// Throws ServiceError: bad_argument if the run refuses, internal on short data.
  collector::WindowReply gather(const Selection& sel, const collector::WindowRequest& r, collector::WindowStream* stream);

 private:
  struct Plan;
  std::shared_ptr<ReplySlots::Slot> place(Plan& plan, std::size_t nv, collector::WindowStream* stream, WindowTarget& target);
  collector::WindowReply from_root(Plan& plan, const WindowTarget& target);
  collector::WindowReply from_ranks(Plan& plan, const WindowTarget& target, bool shared,
                                    collector::WindowStream* stream);

  ComputeLink& link_;
  ReplySlots& slots_;
  RelayStats& stats_;
};

}  // namespace rwd::live
