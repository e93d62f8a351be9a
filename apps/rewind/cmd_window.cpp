// `rewind window FILE[@STEP]|HOST:PORT --box x0,y0,z0,x1,y1,z1 --budget N [--vars p,u]
// [--time SEL] [--token-file F] [--out F.vtm|F.vti|F.json]`: one sliding-window query, from
// a file (in-process, the same FileService a server uses) or from `rewind serve`.
// `rewind window RUN.h5 --time live` (or RUN.h5.contact with any --time) asks the running
// job writing RUN.h5, found through its contact file (collector/contact.hpp).
// Prints the level chosen, the cells returned and the time taken.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "job_contact.hpp"
#include "rewind/collector/client.hpp"
#include "rewind/collector/file_service.hpp"
#include "rewind/collector/token.hpp"
#include "rewind/kernel/reader.hpp"
#include "window_output.hpp"

namespace rwd::cli {
namespace {

namespace col = rwd::collector;

struct WindowOptions {
  std::string source;
  std::string box;
  std::uint64_t budget = 0;
  std::string vars;
  std::string time;
  std::string token, token_file;
  std::string out;
  std::string file;  ///< a server's timeline (one of its files); "" = its first
  std::string lod = "uniform";
  double timeout = 60;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

col::WindowRequest make_request(const WindowOptions& o) {
  col::WindowRequest r;
  const auto parts = split(o.box);
  if (parts.size() != 6) throw UsageError("--box " + o.box + ": expected x0,y0,z0,x1,y1,z1");
  for (int i = 0; i < 6; ++i) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(parts[static_cast<std::size_t>(i)], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != parts[static_cast<std::size_t>(i)].size()) throw UsageError("--box: \"" + parts[static_cast<std::size_t>(i)] + "\" is not a number");
    (i < 3 ? r.lo : r.hi)[static_cast<std::size_t>(i % 3)] = v;
  }
  r.budget = o.budget;
  r.variables = split(o.vars);
  r.lod = o.lod;
  if (const auto e = col::Handler::validate(r, col::HandlerLimits{})) throw UsageError(e->message);
  return r;
}

int run_window(const WindowOptions& o) {
  auto req = make_request(o);
  const auto t0 = std::chrono::steady_clock::now();
  col::WindowReply w;
  const auto [file, step] = kernel::split_step_spec(o.source);
  const auto remote = parse_host_port(o.source);
  std::error_code ec;  // a path that exists but cannot be looked at (a symlink loop) is a file: the kernel says why
  // A run file with --time live (or its .contact file): its job, through the contact file.
  const bool job = o.source.ends_with(".contact") ||
                   (o.time == "live" && o.source.find('@') == std::string::npos && names_run_file(o.source));
  if (job || (!std::filesystem::exists(file, ec) && !ec && remote)) {
    auto client = connect_to(job, o.source, remote ? remote->first : "", remote ? remote->second : 0, o.token,
                             o.token_file, o.timeout, "rewind-window");
    req.time = o.time.empty() ? "live" : o.time;
    req.file = served_file(client, o.file);
    w = client.window(req);
  } else {
    col::FileService service({file});
    const bool step_given = o.source.find('@') != std::string::npos;
    if (step_given && !o.time.empty()) throw UsageError("give the step either as FILE@STEP or as --time, not both");
    if (!o.file.empty()) throw UsageError("--file picks one of a server's files; for a file give FILE@STEP");
    req.time = !o.time.empty() ? o.time : step;  // the kernel's rule, as rewind serve and Python's run.at
    req.file = file;  // FILE@STEP: that file's own steps, not its timeline through its parents
    col::Handler handler(service);
    auto reply = handler.handle(req);
    if (const auto* e = std::get_if<col::ErrorReply>(&reply)) throw std::runtime_error(std::string(col::to_string(e->code)) + ": " + e->message);
    w = std::get<col::WindowReply>(std::move(reply));
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("step {} (t={:.6g}) of {}: level {}{}, {}, {} cells per variable ({}), {:.1f} ms\n", w.step, w.time,
             w.file,
             w.lod == "adaptive" ? fmt::format("{} (adaptive: mixed levels)", w.level) : std::to_string(w.level),
             w.stride > 1 ? fmt::format(" stride {}", w.stride) : "",
             count_of(static_cast<std::int64_t>(w.pieces.size()), "piece"), w.cells,
             count_of(static_cast<std::int64_t>(w.variables.size()), "variable"), ms);
  // What the window holds, so a coarse level's values can be told at a glance (the flow,
  // not an initial state): each variable's range over the window's fluid cells.
  std::string ranges;
  for (std::size_t v = 0; v < w.variables.size(); ++v) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t c = 0; c < w.values[v].size(); ++c) {
      if (!w.cell_type.empty() && w.cell_type[c] == 1) continue;  // solid: not flow
      lo = std::min(lo, w.values[v][c]), hi = std::max(hi, w.values[v][c]);
    }
    if (lo <= hi) ranges += fmt::format("{}{} {:.4g}..{:.4g}", ranges.empty() ? "" : ", ", w.variables[v], lo, hi);
  }
  if (!ranges.empty()) fmt::print("  range over fluid cells: {}\n", ranges);
  if (!o.out.empty()) {
    write_window(o.out, w);
    fmt::print("wrote {}\n", o.out);
  }
  return 0;
}

const Registration reg{Command{
    "window", "Fetch one sliding window (box + budget) from a file or a `rewind serve`", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<WindowOptions>();
      sub.add_option("source", o->source,
                     "FILE[@STEP], HOST:PORT of `rewind serve` or `rewind run --listen`, or a live run's FILE with "
                     "--time live (its job, through FILE.contact)")
          ->required();
      sub.add_option("--box", o->box, "x0,y0,z0,x1,y1,z1 (physical coordinates)")->required();
      sub.add_option("--budget", o->budget, "At most N cells (N values of each variable): the finest level of detail that fits")->required();
      sub.add_option("--vars", o->vars, "Variables, comma-separated (default: every variable the step holds)");
      sub.add_option("--lod", o->lod,
                     "uniform: one level over the box (the paper's rule); adaptive: the budget spent where the first "
                     "variable changes most, on mixed levels (a file's per-grid statistics; else uniform)")
          ->check(CLI::IsMember({"uniform", "adaptive"}))
          ->capture_default_str();
      sub.add_option("--time", o->time,
                     "live, latest, N, #i or t=T (default: latest for a file, live for a server); live with a FILE: "
                     "the running job writing it");
      sub.add_option("--file", o->file,
                     "With a server: which of its files (a run's in-job branches) --time refers to (default: the first)");
      add_token_options(sub, o->token, o->token_file, false);
      sub.add_option(
             "--timeout", o->timeout,
             "Seconds for each network call, and for a running job to reach a --time t=T it has not reached yet")
          ->capture_default_str();
      sub.add_option("--out", o->out, "Write the window: .vtm (ParaView), .vti (one piece) or .json");
      return [o] { return run_window(*o); };
    },
    71}};

}  // namespace
}  // namespace rwd::cli
