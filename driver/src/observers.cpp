#include "rewind/driver/observers.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace rwd::driver {

std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  if (s >= 100.0 * 3600.0) return ">100 h";  // a collapsing dt: no overflow, no fake precision
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

void MonitorCsv::write(Run& run, Csv& c) {
  const auto m = run.solver().monitors();  // collective
  c.last_step = m.step;
  const auto& file = run.spec().monitor_file;
  if (!run.print() || file.empty() || m.step <= c.rows_through) return;
  if (!c.out) {
    c.out = std::make_unique<std::ofstream>(file, c.append ? std::ios::app : std::ios::trunc);
    if (!*c.out) throw std::runtime_error(fmt::format("cannot write monitor file '{}'", file));
    if (!c.append) *c.out << monitor_csv_header(m, run.spec().case_name);
  }
  *c.out << monitor_csv_row(m, run.solver().config().reference_velocity());
  if (!c.out->flush() && !c.failed) {  // a full disk: said once; the run and its HDF5 file go on
    c.failed = true;
    fmt::print(stderr, "rewind run: warning: monitor file {}: rows from step {} on could not be written ({})\n", file,
               m.step, std::strerror(errno));
  }
}

void MonitorCsv::at_boundary(Run& run, const Boundary& b) {
  if (b.first) {
    // A new timeline writes its own CSV (or continues its parent's).
    auto& c = csv_[run.timeline()] = Csv{};
    c.append = run.spec().monitor_append;
    if (c.append) {  // a continued CSV already has the restart step's row, maybe later ones
      c.last_step = run.solver().scalar_state().step;
      c.rows_through = run.print() ? last_row_step(run.spec().monitor_file) : -1;
      return;
    }
    write(run, c);
    return;
  }
  if (run.solver().scalar_state().step % interval_ == 0) write(run, csv_[run.timeline()]);
}

void MonitorCsv::at_end(Run& run) {
  auto& c = csv_[run.timeline()];
  if (run.solver().scalar_state().step != c.last_step) write(run, c);
}

void Progress::at_boundary(Run& run, const Boundary& b) {
  if (every_ <= 0 || !run.print()) return;
  const auto now = clock::now();
  auto& line = lines_[run.timeline()];
  if (b.first) {  // an in-job branch continues its run's clock; the futures of a fork start theirs
    const auto before = lines_.find(last_);
    if (run.running_futures() == 1 && before != lines_.end() && last_ != run.timeline()) line = before->second;
    else line.t0 = line.last = now;
    last_ = run.timeline();
    return;
  }
  last_ = run.timeline();
  ++line.steps;
  if (std::chrono::duration<double>(now - line.last).count() < every_) return;
  line.last = now;
  const auto& info = *b.step;
  const auto& c = run.solver().config();
  const double wall = std::chrono::duration<double>(now - line.t0).count();
  const double rate = static_cast<double>(run.leaf_cells()) * static_cast<double>(line.steps) / wall;
  const double per_step = wall / static_cast<double>(line.steps);
  double left = (c.time.end - info.time) / info.dt;
  if (c.time.max_steps < std::numeric_limits<std::int64_t>::max())
    left = std::min(left, static_cast<double>(c.time.max_steps - info.step));
  if (run.running_futures() > 1) fmt::print("{}: ", std::filesystem::path(run.spec().output.file).filename().string());
  fmt::print("step {:>7}  t = {:<10.5g} dt = {:<9.3e} p: {:>2} cycles |div| = {:<9.2e}{} {:6.2f} Mcell/s  ETA {}\n",
             info.step, info.time, info.dt, info.pressure.cycles, info.pressure.residual,
             info.pressure.converged ? " " : "!", rate * 1e-6, hms(left * per_step));
  std::fflush(stdout);
}

}  // namespace rwd::driver
