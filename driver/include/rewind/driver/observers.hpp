// The standard observers of a run: the output file, the monitor CSV and the progress
// line. Each is collective over the compute ranks (called by Run at every boundary);
// only the reporting rank (Run::print()) writes text files and prints.
#pragma once
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <map>
#include <string>

#include "rewind/driver/run.hpp"

namespace rwd::driver {

/// Writes the outputs due at each boundary (RunOutput::after_step); the last boundary
/// of a run, or of a stop request, writes the final checkpoint. Add it after any
/// steering observer, so a step's record holds the changes made at its boundary.
class OutputObserver final : public Observer {
 public:
  void at_boundary(Run& run, const Boundary& b) override;
};

/// The monitor CSV (kinetic energy, forces, ...) every `interval` steps and at the
/// end; a new timeline (an in-job branch, each future of a fork) writes its own CSV.
class MonitorCsv final : public Observer {
 public:
  explicit MonitorCsv(std::int64_t interval) : interval_(interval) {}
  void at_boundary(Run& run, const Boundary& b) override;
  void at_end(Run& run) override;

 private:
  struct Csv {  ///< one timeline's
    std::unique_ptr<std::ofstream> out;
    bool append = false;
    std::int64_t last_step = -1;
    std::int64_t rows_through = -1;  ///< a continued CSV has rows up to this step
    bool failed = false;             ///< a row could not be written (said once)
  };
  void write(Run& run, Csv& c);
  std::int64_t interval_;
  std::map<std::uint64_t, Csv> csv_;  ///< by Run::timeline()
};

/// One progress line every `seconds` of wall time (0 = none): step, time, dt,
/// pressure cycles, divergence, throughput and the time left.
class Progress final : public Observer {
 public:
  explicit Progress(double seconds) : every_(seconds) {}
  void at_boundary(Run& run, const Boundary& b) override;

 private:
  using clock = std::chrono::steady_clock;
  double every_;
  struct Line {  ///< one timeline's
    clock::time_point t0{}, last{};
    std::int64_t steps = 0;
  };
  std::map<std::uint64_t, Line> lines_;  ///< by Run::timeline()
  std::uint64_t last_ = 0;               ///< the timeline of the last boundary
};

/// The CSV header and row of the monitors (the columns depend on the case). The
/// header starts with a comment line "# case: NAME" (plot titles; CSV readers skip it
/// as gnuplot and numpy do, or with pandas' comment="#"). With an obstacle, `u_ref` is the
/// velocity its coefficients (cd, cl, strouhal) are scaled by at that row: monitor.
/// reference_velocity if the case fixes it, else the run's own inflow (its mean), so a
/// branched or steered inflow shows which one is used.
std::string monitor_csv_header(const solver::Monitors& m, const std::string& case_name);
std::string monitor_csv_row(const solver::Monitors& m, double u_ref);
/// "mm:ss" or "h:mm:ss"; "--:--" for a negative or non-finite time, ">100 h" beyond.
std::string hms(double seconds);

}  // namespace rwd::driver
