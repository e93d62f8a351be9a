// The run's in-situ hook ([insitu] of the case; InsituSettings is in run.hpp): the
// observer that calls the hook (rewind/insitu/hook.hpp) every N steps with the step's grids.
// docs/insitu.md is the guide.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rewind/driver/run.hpp"
#include "rewind/insitu/hook.hpp"

namespace rwd::driver {

/// Calls the hook at every boundary whose step is a multiple of `every` (the first
/// boundary included when it is; a step is never handed over twice in a timeline;
/// an in-job branch starts a new timeline whose steps are handed over again). Init
/// runs at the first boundary, finalize in finish(). Collective over the compute
/// ranks. A hook error is reported once (stderr, one line, by the reporting rank) and
/// disables the hook; the run goes on. The state fields (u, v, w, p, T) are handed
/// over with their halos as the solver left them after the step.
class InsituObserver final : public Observer {
 public:
  InsituObserver(insitu::Hook hook, InsituSettings settings);
  void at_boundary(Run& run, const Boundary& b) override;
  /// rewind_insitu_finalize; call once after Run::run(). Collective.
  void finish(Run& run);
  /// The steps handed to the hook so far (this process; the same on every rank).
  [[nodiscard]] std::int64_t calls() const { return calls_; }

 private:
  void report(Run& run, const insitu::Outcome& o) const;
  insitu::Hook hook_;
  InsituSettings settings_;
  std::vector<std::vector<std::uint8_t>> types_;
  std::int64_t last_step_ = -1;
  std::int64_t calls_ = 0;
};

}  // namespace rwd::driver
