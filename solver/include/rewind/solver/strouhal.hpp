// The Strouhal estimator: upward zero crossings of an obstacle's lift coefficient.
//
// Its state is part of a run's scalar state (ScalarState::strouhal), checkpointed
// with every checkpoint step, so a restarted run reports the Strouhal number as soon
// as the uninterrupted run would. Pure; the same on every rank.
#pragma once
#include <vector>

namespace rwd::solver {

class StrouhalEstimator {
 public:
  /// One step's lift coefficient at simulated time t. A crossing counts once the lift
  /// has been clearly negative (< -1e-3) since the last one.
  void add(double t, double cl);
  /// St = L / (U T) from the period T between the last two crossings; NaN before two.
  [[nodiscard]] double value(double length, double velocity) const;
  /// The state as numbers (stored as the step attribute `monitor_state`, format 1.4):
  /// [armed, have_prev, prev_cl, prev_t, last crossing, the one before] (NaN = none).
  [[nodiscard]] std::vector<double> state() const;
  /// Restores state(); an empty vector (a file before 1.4) starts afresh.
  void restore(const std::vector<double>& s);

 private:
  bool armed_ = false;
  bool have_prev_ = false;
  double prev_cl_ = 0.0, prev_t_ = 0.0;
  double last_ = 0.0, before_ = 0.0;  ///< the last two crossings
  int crossings_ = 0;                 ///< how many of them are known (0..2)
};

}  // namespace rwd::solver
