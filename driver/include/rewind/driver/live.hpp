// The live link of `rewind run --listen`: the run's side of live windows and steering
// (rewind/live/link.hpp), as an observer at every step boundary. It is the live link's
// host (live::Host) for a Run: where the run is, its grids (parents synchronised: the
// level of detail shows this step), its steerable parameters (steering.hpp) and the
// branch inside the job (Run::branch, checked before anything changes).
// docs/collector-protocol.md ("Live runs") describes the commands for users.
#pragma once
#include <cstdint>
#include <memory>

#include "rewind/driver/run.hpp"
#include "rewind/live/link.hpp"

namespace rwd::driver {

/// Add it first: steering changes made at a boundary must precede that boundary's output.
/// Collective over the compute ranks.
class LiveLink final : public Observer {
 public:
  /// `pause_at_end`: when the run reaches its end (time or step limit), pause there, its
  /// last step written, so clients can still look, branch, or set a later time.end and
  /// resume; `resume` or `stop` then ends it.
  LiveLink(live::Link link, bool pause_at_end);
  ~LiveLink() override;
  void at_boundary(Run& run, const Boundary& b) override;
  /// Pauses at the end if asked to (above); then tells the collector the run has ended
  /// and serves its last commands until it says bye; then, if windows were served, the
  /// reporting rank prints one `live:` line: how many, and the time the slowest compute
  /// rank spent copying and sending them (what querying clients cost the run).
  void at_end(Run& run) override;
  /// While every future left is paused alone: serves the collector's commands.
  void idle(Run& run) override;
  /// Every compute rank meets the collector at every future's boundary.
  [[nodiscard]] bool job_wide() const override { return true; }

 private:
  class Host;
  live::Link link_;
  bool pause_at_end_ = false;
  std::uint64_t timeline_ = 0;  ///< counts new timelines: the tree's version
};

}  // namespace rwd::driver
