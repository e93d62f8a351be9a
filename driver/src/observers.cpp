#include "rewind/driver/observers.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace rwd::driver {

std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60)
                   : fmt::format("{:02}:{:02}", t / 60, t % 60);
}

std::string monitor_csv_header(const solver::Monitors& m, const std::string& case_name) {
  std::string h = "# case: " + case_name +
                  "\nstep,time,dt,kinetic_energy,max_velocity,max_divergence,pressure_cycles,pressure_residual";
  if (m.has_obstacle) h += ",cd,cl,cl_z,dp,strouhal,u_ref";
  if (m.has_nusselt) h += ",nu_xmin,nu_xmax";
  if (m.has_tg) h += ",tg_error";
  return h + "\n";
}

std::string monitor_csv_row(const solver::Monitors& m, double u_ref) {
  std::string r = fmt::format("{},{:.10g},{:.6g},{:.10g},{:.8g},{:.4g},{},{:.4g}", m.step, m.time, m.dt, m.kinetic_energy,
                              m.max_velocity, m.max_divergence, m.pressure_cycles, m.pressure_residual);
  if (m.has_obstacle)
    r += fmt::format(",{:.8g},{:.8g},{:.8g},{:.8g},{:.6g},{:.8g}", m.cd, m.cl, m.cl_z, m.dp, m.strouhal, u_ref);
  if (m.has_nusselt) r += fmt::format(",{:.8g},{:.8g}", m.nu_xmin, m.nu_xmax);
  if (m.has_tg) r += fmt::format(",{:.6g}", m.tg_error);
  return r + "\n";
}

void OutputObserver::at_boundary(Run& run, const Boundary& b) {
  auto& s = run.solver();
  run.output().after_step(s, b.first, s.finished() || run.stop_requested());
}

namespace {
// The step of a monitor CSV's last row (-1 if none): a run killed after its last
// checkpoint wrote rows its continuation recomputes; they are not written twice.
std::int64_t last_row_step(const std::string& file) {
  std::ifstream in(file);
  std::int64_t last = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] < '0' || line[0] > '9') continue;  // comment, header
    try {
      last = std::stoll(line.substr(0, line.find(',')));
    } catch (const std::exception&) {
    }
  }
  return last;
}
}  // namespace

void MonitorCsv::write(Run& run) {
  const auto m = run.solver().monitors();  // collective
  last_step_ = m.step;
  const auto& file = run.spec().monitor_file;
  if (!run.print() || file.empty() || m.step <= rows_through_) return;
  if (!csv_) {
    csv_ = std::make_unique<std::ofstream>(file, append_ ? std::ios::app : std::ios::trunc);
    if (!*csv_) throw std::runtime_error(fmt::format("cannot write monitor file '{}'", file));
    if (!append_) *csv_ << monitor_csv_header(m, run.spec().case_name);
  }
  *csv_ << monitor_csv_row(m, run.solver().config().reference_velocity());
  if (!csv_->flush() && !failed_) {  // a full disk: said once; the run and its HDF5 file go on
    failed_ = true;
    fmt::print(stderr, "rewind run: warning: monitor file {}: rows from step {} on could not be written ({})\n", file,
               m.step, std::strerror(errno));
  }
}

void MonitorCsv::at_boundary(Run& run, const Boundary& b) {
  if (b.first) {
    csv_.reset();
    failed_ = false;  // a new timeline writes its own CSV (or continues its parent's)
    append_ = run.spec().monitor_append;
    if (append_) {  // a continued CSV already has the restart step's row, maybe later ones
      last_step_ = run.solver().scalar_state().step;
      rows_through_ = run.print() ? last_row_step(run.spec().monitor_file) : -1;
      return;
    }
    rows_through_ = -1;
    write(run);
    return;
  }
  if (run.solver().scalar_state().step % interval_ == 0) write(run);
}

void MonitorCsv::at_end(Run& run) {
  if (run.solver().scalar_state().step != last_step_) write(run);
}

void Progress::at_boundary(Run& run, const Boundary& b) {
  if (every_ <= 0 || !run.print()) return;
  const auto now = clock::now();
  if (b.first) {
    if (steps_ == 0) t0_ = last_ = now;
    return;
  }
  ++steps_;
  if (std::chrono::duration<double>(now - last_).count() < every_) return;
  last_ = now;
  const auto& info = *b.step;
  const auto& c = run.solver().config();
  const double wall = std::chrono::duration<double>(now - t0_).count();
  const double rate = static_cast<double>(run.leaf_cells()) * static_cast<double>(steps_) / wall;
  const double per_step = wall / static_cast<double>(steps_);
  double left = (c.time.end - info.time) / info.dt;
  if (c.time.max_steps < std::numeric_limits<std::int64_t>::max())
    left = std::min(left, static_cast<double>(c.time.max_steps - info.step));
  fmt::print("step {:>7}  t = {:<10.5g} dt = {:<9.3e} p: {:>2} cycles |div| = {:<9.2e}{} {:6.2f} Mcell/s  ETA {}\n",
             info.step, info.time, info.dt, info.pressure.cycles, info.pressure.residual,
             info.pressure.converged ? " " : "!", rate * 1e-6, hms(left * per_step));
  std::fflush(stdout);
}

}  // namespace rwd::driver
