// `rewind plot MONITOR.csv [MORE.csv ...] -o out.png [--follow]`: monitor CSVs as a PNG (a
// run and its branches on shared axes, one line per file), drawn by the embedded
// scripts/plot_monitor.py with the system Python and matplotlib; --follow redraws it as
// the CSVs grow (futures of one run while they compute).
#include <fmt/core.h>
#include <sys/wait.h>

#include <csignal>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "commands.hpp"
#include "rewind/solver/plot_script.hpp"

namespace rwd::cli {
namespace {

struct PlotOptions {
  std::vector<std::string> csv;
  std::string output;
  std::string labels;
  std::string columns;
  std::string title;
  std::string python;
  bool describe = false;  ///< print each panel's label, scale, limits and ticks
  bool follow = false;    ///< redraw as the CSVs grow
  double follow_seconds = 30;
};

int run_plot(const PlotOptions& o) {
  namespace fs = std::filesystem;
  for (const auto& c : o.csv)  // following: a future's CSV may not be there yet
    if (!o.follow && !fs::exists(c)) throw std::runtime_error(fmt::format("{}: no such file", c));
  std::string python = o.python;
  if (python.empty()) python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  // Write the script to a private temporary file (removed on every path).
  char tmpl[] = "/tmp/rewind-plot-XXXXXX.py";
  const int fd = mkstemps(tmpl, 3);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the plot script");
  const std::string script = tmpl;
  struct Remove {
    std::string p;
    ~Remove() { std::remove(p.c_str()); }
  } cleanup{script};
  {
    const std::string text = solver::kPlotMonitorScript;
    if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      close(fd);
      throw std::runtime_error("cannot write the plot script");
    }
    close(fd);
  }
  std::vector<std::string> args = {python, script, "--prog", "rewind plot"};
  args.insert(args.end(), o.csv.begin(), o.csv.end());
  args.insert(args.end(), {"-o", o.output});
  if (!o.labels.empty()) args.insert(args.end(), {"--labels", o.labels});
  if (!o.columns.empty()) args.insert(args.end(), {"--columns", o.columns});
  if (!o.title.empty()) args.insert(args.end(), {"--title", o.title});
  if (o.describe) args.emplace_back("--describe");
  if (o.follow) args.insert(args.end(), {"--follow", "--follow-seconds", fmt::format("{}", o.follow_seconds)});
  // Ctrl-C while following stops the script, which keeps its last figure; this process
  // waits for it (and removes the script), as system(3) does.
  struct sigaction ignore {}, saved {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &saved);
  struct Restore {
    struct sigaction s;
    ~Restore() { sigaction(SIGINT, &s, nullptr); }
  } restore{saved};
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    sigaction(SIGINT, &saved, nullptr);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "rewind plot: cannot run %s\n", argv[0]);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw std::runtime_error(fmt::format("cannot run {} (--python: a Python 3 with matplotlib)", python));
  // The script has said what went wrong, in one "rewind plot: error:" line.
  if (!WIFEXITED(status)) throw std::runtime_error("the plot script was killed");
  return WEXITSTATUS(status);
}

const Registration reg{Command{
    "plot", "Plot monitor CSVs of `rewind run` (a run and its branches) as a PNG; --follow: as they grow", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<PlotOptions>();
      sub.add_option("csv", o->csv, "Monitor CSVs written by `rewind run` (several: one line each, shared axes)")
          ->required();
      sub.add_option("--labels", o->labels, "Legend labels, comma-separated, one per CSV (default: file names)");
      sub.add_option("-o,--output", o->output, "PNG file to write")->required();
      sub.add_option("--columns", o->columns, "Comma-separated columns to plot (default: automatic)");
      sub.add_option("--title", o->title, "Plot title (default: the case name the CSV records)");
      sub.add_flag("--describe", o->describe, "Also print each panel's label, scale, limits and tick labels");
      sub.add_flag("--follow", o->follow,
                   "Redraw the PNG as the CSVs grow (running jobs, futures of one run; a CSV not there yet is "
                   "waited for) until none has grown for --follow-seconds, or Ctrl-C");
      sub.add_option("--follow-seconds", o->follow_seconds,
                     "With --follow: stop once no CSV has grown for this many seconds")
          ->check(non_negative_number())
          ->capture_default_str();
      sub.add_option("--python", o->python, "Python interpreter (default /usr/bin/python3)");
      return [o] { return run_plot(*o); };
    },
    31}};

}  // namespace
}  // namespace rwd::cli
