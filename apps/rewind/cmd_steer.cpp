// `rewind steer HOST:PORT|RUN.h5 [--token-file F] [--json] COMMAND`: steer the collector of a running
// `rewind run` (docs/collector-protocol.md, revision 1.1), by its address or by its run
// file (through RUN.h5.contact, collector/contact.hpp). COMMAND: status, pause,
// resume, stop, parameters, set KEY=VALUE..., branch --from SEL [--set KEY=VALUE]...
// [--file F] [--output F], or a fork: branch --from SEL --future 'K=V;K=V' --future ...
// [--output F1 --output F2 ...] (revision 1.8); --file F on pause, resume, stop and set acts
// on one future of several. VALUEs are read as `rewind run --set` reads them (TOML: a
// number or [a, b, c]). Human output by default, the reply's JSON with --json; every
// bad input and every server error is one "rewind steer: error: ..." line, exit 1.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <memory>

#include "commands.hpp"
#include "job_contact.hpp"
#include "rewind/collector/client.hpp"
#include "rewind/collector/handler.hpp"
#include "rewind/collector/token.hpp"
#include "rewind/config/case_file.hpp"
#include "rewind/config/case_keys.hpp"
#include "window_output.hpp"

namespace rwd::cli {
namespace {

namespace col = rwd::collector;

struct SteerOptions {
  std::string server;
  std::string token, token_file;
  bool json = false;
  double timeout = 30;
  std::vector<std::string> assignments;  ///< set KEY=VALUE..., branch --set
  std::string from, file;                ///< branch; file: also the future of pause/resume/stop/set
  std::vector<std::string> outputs;      ///< branch --output (one per future)
  std::vector<std::string> futures;      ///< branch --future 'K=V;K=V' (repeatable)
};

/// The branch request of `o`: one future (--set, --output) or several (--future ...).
col::BranchRequest branch_request(const SteerOptions& o);

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// "key=value" as `rewind run --set` reads it: a number, or [a, b, c] (finite).
std::pair<std::string, col::ParamValue> parse_assignment(const std::string& kv) {
  const auto eq = kv.find('=');
  const auto key = trim(kv.substr(0, eq));
  const auto text = eq == std::string::npos ? "" : trim(kv.substr(eq + 1));
  auto doc = config::CaseDocument::parse("", "set", {eq == std::string::npos ? kv : key + "=" + text});
  // Not through the key table: the server checks the value against this run's list.
  const auto n = doc.numbers(key);
  col::ParamValue v;
  if (text.starts_with('[')) {
    if (n.size() != 3) throw doc.error(key, "expected an array of 3 values");
    v = std::array<double, 3>{n[0], n[1], n[2]};
  } else {
    if (n.size() != 1) throw doc.error(key, "expected a number");
    v = n[0];
  }
  const bool finite = std::visit(
      [](const auto& x) {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, double>) return std::isfinite(x);
        else return std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]);
      },
      v);
  if (!finite) throw std::invalid_argument(kv + ": values must be finite");
  return {key, v};
}

std::vector<std::string> split_futures(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    const auto semi = text.find(';', at);
    const auto kv = trim(text.substr(at, semi == std::string::npos ? std::string::npos : semi - at));
    if (!kv.empty()) out.push_back(kv);
    if (semi == std::string::npos) return out;
    at = semi + 1;
  }
}

col::ParamValues parse_assignments(const std::vector<std::string>& kvs) {
  col::ParamValues out;
  for (const auto& kv : kvs) {
    auto [key, v] = parse_assignment(kv);
    if (!out.emplace(key, v).second) throw std::invalid_argument(key + " is given twice");
  }
  if (const auto e = col::Handler::validate(out, col::HandlerLimits{}, true)) throw std::invalid_argument(e->message);
  return out;
}

std::string show(const col::ParamValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  const auto& a = std::get<std::array<double, 3>>(v);
  return fmt::format("[{:g}, {:g}, {:g}]", a[0], a[1], a[2]);
}

std::string show(const col::ParamValues& values) {
  std::string out;
  for (const auto& [name, v] : values) out += (out.empty() ? "" : ", ") + name + " = " + show(v);
  return out;
}

std::string at_step(std::int64_t step, double time) { return fmt::format("step {} (t = {:.6g})", step, time); }

// ", on compute ranks 2-3" when a future computes on part of the job's ranks (1.12).
std::string on_ranks(const col::FutureStatus& f, std::uint32_t job) {
  if (f.ranks == 0 || f.ranks >= job) return "";
  if (f.ranks == 1) return fmt::format(", on compute rank {}", f.first_rank);
  return fmt::format(", on compute ranks {}-{}", f.first_rank, f.first_rank + f.ranks - 1);
}

void print_parameters(const std::vector<col::ParameterInfo>& params) {
  std::size_t w = 4;
  for (const auto& p : params) w = std::max(w, p.name.size());
  fmt::print("{:<{}}  {:<24}  {:<20}  {:<8}  {}\n", "name", w, "value", "range", "unit", "description");
  for (const auto& p : params)
    fmt::print("{:<{}}  {:<24}  {:<20}  {:<8}  {}\n", p.name, w, show(p.value),
               config::KeyRange{p.min, p.max, p.min_open, p.max_open}.text(), p.unit, p.description);
}

/// Runs one command; prints the reply (human or JSON).
int run_steer(const SteerOptions& o, const std::string& command) {
  const auto ep = parse_host_port(o.server);
  const bool run_file = names_run_file(o.server);
  if (!ep && !run_file)
    throw std::invalid_argument(o.server + ": expected HOST:PORT of a running `rewind run`'s collector, or the run's "
                                "output file (with its contact file FILE.contact beside it)");
  // Parse everything before connecting: a typo costs no connection.
  col::ParamValues values;
  if (command == "set") {
    values = parse_assignments(o.assignments);
    if (values.empty()) throw std::invalid_argument("set: give at least one KEY=VALUE");
  }
  col::BranchRequest branch;
  if (command == "branch") {
    branch = branch_request(o);
    if (const auto e = col::Handler::validate(branch, col::HandlerLimits{})) throw std::invalid_argument(e->message);
  }
  auto client = connect_to(run_file, o.server, ep ? ep->first : "", ep ? ep->second : 0, o.token, o.token_file,
                           o.timeout, "rewind-steer");
  col::Body reply;
  if (command == "status") reply = col::StatusReply{client.status()};
  else if (command == "parameters") reply = col::ParametersReply{client.parameters()};
  else if (command == "set") reply = client.set(values, o.file);
  else if (command == "branch") reply = client.branch(branch);
  else reply = client.control(*col::parse_control_action(command), o.file);
  if (o.json) {
    fmt::print("{}\n", col::json_text(reply));
    return 0;
  }
  if (const auto* s = std::get_if<col::StatusReply>(&reply)) {
    const auto& st = s->status;
    fmt::print("{} at {}, {:.3g} steps/s, {} compute rank{}, {} client{}\n", col::to_string(st.state), at_step(st.step, st.time),
               st.steps_per_second, st.ranks, st.ranks == 1 ? "" : "s", st.clients, st.clients == 1 ? "" : "s");
    if (st.futures.size() <= 1) {
      fmt::print("writing {}{}\n", st.file, st.parent.empty() ? "" : " (a branch of " + st.parent + ")");
    } else {
      fmt::print("{} futures:\n", st.futures.size());
      for (const auto& f : st.futures)
        fmt::print("  {}  {} at {}, {:.3g} steps/s{}{}\n", f.file, col::to_string(f.state), at_step(f.step, f.time),
                   f.steps_per_second, on_ranks(f, st.ranks),
                   f.changes.empty() ? "" : fmt::format(", changes {}", fmt::join(f.changes, " ")));
    }
  } else if (const auto* c = std::get_if<col::ControlReply>(&reply)) {
    fmt::print("{} at {}\n", col::to_string(c->state), at_step(c->step, c->time));
  } else if (const auto* p = std::get_if<col::ParametersReply>(&reply)) {
    print_parameters(p->parameters);
  } else if (const auto* r = std::get_if<col::SetReply>(&reply)) {
    fmt::print("{} from {} on\n", show(r->values), at_step(r->step, r->time));
  } else if (const auto* b = std::get_if<col::BranchReply>(&reply)) {
    if (b->files.size() <= 1) fmt::print("branched {} from {} of {}\n", b->file, at_step(b->step, b->time), b->parent);
    else fmt::print("forked {} futures from {} of {}: {}\n", b->files.size(), at_step(b->step, b->time), b->parent,
                    fmt::join(b->files, ", "));
  }
  return 0;
}

col::BranchRequest branch_request(const SteerOptions& o) {
  col::BranchRequest b;
  b.from = o.from;
  b.file = o.file;
  if (o.futures.empty()) {
    if (o.outputs.size() > 1) throw std::invalid_argument("branch: one --output per branch (several with --future)");
    b.values = parse_assignments(o.assignments);
    b.output = o.outputs.empty() ? "" : o.outputs.front();
    return b;
  }
  if (!o.assignments.empty())
    throw std::invalid_argument("branch: give the changes in each --future, not with --set");
  if (!o.outputs.empty() && o.outputs.size() != o.futures.size())
    throw std::invalid_argument(fmt::format("branch: {} --future but {} --output: give one --output per future, or none",
                                            o.futures.size(), o.outputs.size()));
  for (std::size_t i = 0; i < o.futures.size(); ++i)
    b.futures.push_back({parse_assignments(split_futures(o.futures[i])), o.outputs.empty() ? "" : o.outputs[i]});
  return b;
}

const Registration reg{Command{
    "steer", "Steer a running `rewind run`: status, pause, resume, stop, parameters, set, branch", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<SteerOptions>();
      sub.add_option("server", o->server, "HOST:PORT of the run's collector, or the run's output file (through FILE.contact)")
          ->required();
      add_token_options(sub, o->token, o->token_file, false);
      sub.add_flag("--json", o->json, "Print the server's reply as JSON");
      sub.add_option("--timeout", o->timeout, "Seconds for each network call")->capture_default_str();
      sub.require_subcommand(1);
      const auto command = [&sub](const char* name, const char* help) {
        auto* c = sub.add_subcommand(name, help);
        c->fallthrough();  // --json, --token, --token-file after the command
        return c;
      };
      command("status", "State, step, time, speed, file, ranks and clients of the run");
      const auto one_future = [o](CLI::App* c) {
        c->add_option("--file", o->file, "One future of several: the file it writes (default: every future)");
      };
      one_future(command("pause", "Pause at the next step boundary"));
      one_future(command("resume", "Resume a paused run"));
      one_future(command("stop", "Stop: write the final checkpoint and end"));
      command("parameters", "The steerable parameters: value, range, unit");
      auto* set = command("set", "Change parameters from the next step on");
      set->add_option("values", o->assignments, "KEY=VALUE ... (VALUE: a number or [a, b, c], as rewind run --set)")
          ->required();
      one_future(set);
      auto* branch = command("branch", "Branch the run from a committed step into a new file");
      branch->add_option("--from", o->from, "The step: latest, N, #i or t=T")->required();
      branch->add_option("--set", o->assignments, "Change a value in the branch: KEY=VALUE (repeatable)");
      branch->add_option("--future", o->futures,
                         "Fork: one future's changes, 'KEY=VALUE;KEY=VALUE' ('' = the run unchanged); repeat for each "
                         "future, all computed together");
      branch->add_option("--file", o->file, "Which timeline (default: the file being written; with several futures, "
                                            "the one to fork)");
      branch->add_option("--output", o->outputs, "The branch file (default: chosen by the run); with --future, one per future");
      return [o, &sub] {
        for (const auto* c : sub.get_subcommands()) return run_steer(*o, c->get_name());
        return 1;
      };
    },
    72}};

}  // namespace
}  // namespace rwd::cli
