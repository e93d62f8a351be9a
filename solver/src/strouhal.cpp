#include "rewind/solver/strouhal.hpp"

#include <cmath>
#include <limits>

namespace rwd::solver {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

void StrouhalEstimator::add(double t, double cl) {
  if (have_prev_) {
    if (cl < -1e-3) armed_ = true;
    if (armed_ && prev_cl_ < 0.0 && cl >= 0.0) {
      before_ = last_;
      last_ = prev_t_ + (t - prev_t_) * (-prev_cl_) / (cl - prev_cl_);
      crossings_ = crossings_ < 2 ? crossings_ + 1 : 2;
      armed_ = false;
    }
  }
  prev_cl_ = cl, prev_t_ = t, have_prev_ = true;
}

double StrouhalEstimator::value(double length, double velocity) const {
  return crossings_ >= 2 ? length / (velocity * (last_ - before_)) : kNaN;
}

std::vector<double> StrouhalEstimator::state() const {
  return {armed_ ? 1.0 : 0.0, have_prev_ ? 1.0 : 0.0, prev_cl_, prev_t_, crossings_ >= 1 ? last_ : kNaN,
          crossings_ >= 2 ? before_ : kNaN};
}

void StrouhalEstimator::restore(const std::vector<double>& s) {
  *this = StrouhalEstimator{};
  if (s.size() != 6) return;
  armed_ = s[0] != 0.0, have_prev_ = s[1] != 0.0, prev_cl_ = s[2], prev_t_ = s[3];
  crossings_ = std::isnan(s[4]) ? 0 : std::isnan(s[5]) ? 1 : 2;
  last_ = crossings_ >= 1 ? s[4] : 0.0;
  before_ = crossings_ >= 2 ? s[5] : 0.0;
}

}  // namespace rwd::solver
