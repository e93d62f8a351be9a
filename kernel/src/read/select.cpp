// The step selectors every command, the ParaView reader and an in-job branch share
// (latest, N, #i, t=T), over a list of steps: pure (no file is read).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "io/h5util.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::kernel {

using h5::Ctx;

std::pair<std::string, std::string> split_step_spec(const std::string& spec) {
  const auto at = spec.rfind('@');
  if (at == std::string::npos) return {spec, "latest"};
  const std::string sel = spec.substr(at + 1);
  return {spec.substr(0, at), sel.empty() ? "latest" : sel};
}

std::ptrdiff_t index_at_or_before(const double* times, std::size_t n, double t) {
  // Ascending times: the first one past t (with the tolerance), minus one.
  const auto past =
      std::upper_bound(times, times + n, t, [](double t0, double time) { return time > t0 * (1 + 1e-12) + 1e-300; });
  return (past - times) - 1;
}

namespace {
// A selector that lands on a damaged step, or may (t=T: its time is not known), refuses
// rather than choose another step (docs/file-format.md §5: damage, never absence).
[[noreturn]] void refuse_damaged(const Ctx& c, const std::vector<StepEntry>& all, std::size_t i,
                                 const std::string& sel) {
  const StepEntry& d = all[i];
  auto before = std::find_if(all.rend() - static_cast<std::ptrdiff_t>(i), all.rend(),
                             [](const StepEntry& e) { return e.damage.empty(); });
  c.fail(ErrorKind::corrupt, fmt::format("{}step {} is damaged ({}); `rewind verify {}` says more{}",
                                         sel.rfind("t=", 0) == 0 ? sel + " may fall on " : "", d.step, d.damage, c.file,
                                         before == all.rend() ? std::string()
                                                              : fmt::format("; to use an earlier step, name it ({}@{})",
                                                                            c.file, before->step)));
}
}  // namespace

StepEntry select_step(const std::vector<StepEntry>& all, const std::string& sel, const std::string& file) {
  const Ctx c{file};
  if (all.empty()) c.fail(ErrorKind::no_such_step, "the file has no committed step");
  const auto usable = [&](std::size_t i) -> const StepEntry& {
    if (!all[i].damage.empty()) refuse_damaged(c, all, i, sel);
    return all[i];
  };
  if (sel.empty() || sel == "latest") return usable(all.size() - 1);
  char* end = nullptr;
  if (sel[0] == '#') {
    long long i = std::strtoll(sel.c_str() + 1, &end, 10);
    if (*end != '\0' || end == sel.c_str() + 1)
      c.fail(ErrorKind::no_such_step, "bad step selector '" + sel + "' (#i: the i-th committed step, e.g. #0, #-1)");
    long long n = static_cast<long long>(all.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) c.fail(ErrorKind::no_such_step, fmt::format("step index {} out of range (0..{})", sel, n - 1));
    return usable(static_cast<std::size_t>(i));
  }
  if (sel.rfind("t=", 0) == 0) {
    double t = std::strtod(sel.c_str() + 2, &end);
    if (*end != '\0' || end == sel.c_str() + 2 || !std::isfinite(t))
      c.fail(ErrorKind::no_such_step, "bad time selector '" + sel + "' (t=T: a simulated time, e.g. t=1.5)");
    std::vector<double> times;  // of the intact steps, at[k] their places in `all`
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].damage.empty()) {
        times.push_back(all[i].time);
        at.push_back(i);
      }
    const std::ptrdiff_t best = index_at_or_before(times, t);
    // A damaged step after the one in force and before the next intact one may be in force.
    const std::size_t from = best < 0 ? 0 : at[static_cast<std::size_t>(best)] + 1;
    const std::size_t to =
        best + 1 < static_cast<std::ptrdiff_t>(at.size()) ? at[static_cast<std::size_t>(best + 1)] : all.size();
    for (std::size_t i = from; i < to; ++i) (void)usable(i);
    if (best < 0) c.fail(ErrorKind::no_such_step, fmt::format("no committed step at or before t={}", t));
    const StepEntry& last = all[at.back()];
    if (index_at_or_before(&t, 1, last.time) < 0)  // t after the last step, beyond round-off
      c.fail(ErrorKind::no_such_step,
             fmt::format("t={} has not been reached: the last committed step is {} (t = {:.6g})", t, last.step,
                         last.time));
    return all[at[static_cast<std::size_t>(best)]];
  }
  long long s = std::strtoll(sel.c_str(), &end, 10);
  if (*end != '\0' || end == sel.c_str())
    c.fail(ErrorKind::no_such_step, "bad step selector '" + sel + "' (use latest, N, #i or t=T)");
  const auto it = std::find_if(all.begin(), all.end(), [&](const StepEntry& e) { return e.step == s; });
  if (it == all.end()) c.fail(ErrorKind::no_such_step, fmt::format("no committed step {}", s));
  return usable(static_cast<std::size_t>(it - all.begin()));
}

std::string time_selector_note(const std::string& sel, const StepEntry& chosen) {
  if (sel.rfind("t=", 0) != 0) return "";
  const double t = std::strtod(sel.c_str() + 2, nullptr);
  if (std::abs(chosen.time - t) <= 1e-9 * std::max(1.0, std::abs(t))) return "";
  return fmt::format("{} is not an output time; using the step in force then, step {} (t = {:.6g})", sel, chosen.step,
                     chosen.time);
}

namespace {
// The last checkpoint at or before all[i]; a damaged step on the way may be a checkpoint
// (its kind is not known): refused, naming it, rather than passed over.
const StepEntry& checkpoint_at_or_before(const Ctx& c, const std::vector<StepEntry>& all, std::size_t i,
                                         const std::string& sel) {
  for (std::size_t j = i + 1; j-- > 0;) {
    const StepEntry& e = all[j];
    if (!e.damage.empty()) {
      const auto earlier =
          std::find_if(all.rend() - static_cast<std::ptrdiff_t>(j), all.rend(),
                       [](const StepEntry& x) { return x.kind == StepKind::checkpoint && x.damage.empty(); });
      c.fail(ErrorKind::corrupt,
             fmt::format("step {} is damaged ({}); `rewind verify {}` says more{}", e.step, e.damage, c.file,
                         earlier == all.rend() ? std::string()
                                               : fmt::format("; to restart from an earlier checkpoint, name it ({}@{})",
                                                             c.file, earlier->step)));
    }
    if (e.kind == StepKind::checkpoint) return e;
  }
  c.fail(ErrorKind::no_such_step, sel == "latest" || sel.empty()
                                      ? std::string("no committed checkpoint to restart from")
                                      : fmt::format("no checkpoint at or before {} to restart from", sel));
}
}  // namespace

StepEntry select_checkpoint(const std::vector<StepEntry>& all, const std::string& sel, const std::string& file,
                            std::string* note) {
  const Ctx c{file};
  if (note != nullptr) note->clear();
  if (all.empty()) c.fail(ErrorKind::no_such_step, "the file has no committed step");
  if (sel.empty() || sel == "latest") return checkpoint_at_or_before(c, all, all.size() - 1, sel);
  const StepEntry named = select_step(all, sel, file);
  if (sel.rfind("t=", 0) == 0) {  // the step in force at T, then the last checkpoint at or before it
    const auto at = std::find_if(all.begin(), all.end(), [&](const StepEntry& e) { return e.step == named.step; });
    const StepEntry cp = checkpoint_at_or_before(c, all, static_cast<std::size_t>(at - all.begin()), sel);
    if (note != nullptr)
      *note = cp.step == named.step
                  ? time_selector_note(sel, cp)
                  : fmt::format(
                        "{}: step {} (t = {:.6g}) is a visualisation output; restarting from the last "
                        "checkpoint at or before it, step {} (t = {:.6g})",
                        sel, named.step, named.time, cp.step, cp.time);
    return cp;
  }
  if (named.kind != StepKind::checkpoint) {
    std::string cps;
    for (const auto& e : all)
      if (e.kind == StepKind::checkpoint)
        cps += fmt::format("{}{} (t={:.6g})", cps.empty() ? "" : ", ", e.step, e.time);
    c.fail(ErrorKind::no_such_step,
           fmt::format("step {} is a visualisation output; a restart needs a checkpoint (checkpoints: {})", named.step,
                       cps.empty() ? std::string("none") : cps));
  }
  return named;
}

}  // namespace rwd::kernel
