// A branch inside a C code's running job (live_impl.hpp): "go back to step S of file F
// with these changes", into one future or several at once. A fork of K futures splits
// the forked future's G compute ranks into K groups (floor(G/K) each, the first G mod K
// one more), each continuing one future in its own branch file on its own communicator,
// which its BRANCH event hands to the code. Checked on every rank before anything
// changes; the current state is written first; on any failure the run goes on where it was.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "agree.hpp"
#include "live_impl.hpp"
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/lineage.hpp"
#include "rewind/kernel/output_target.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::api {

namespace live = rwd::live;

// What a fork decides before anything changes, the same on every rank.
struct ForkPlan {
  std::size_t forked = 0;  ///< the future it forks
  std::string parent;      ///< the file its step is in
  k::StepEntry from;
  std::vector<std::vector<std::string>> changes;  ///< per future, "key=value"
  std::vector<std::string> outputs;
};

// A fork's groups of ranks, and this rank's (a member of the forked future's).
struct ForkGroups {
  std::vector<int> first, size;           ///< per future
  std::size_t mine = 0;                   ///< members: the index of its group
  std::shared_ptr<rwd::mpi::Comm> split;  ///< members, with several futures
  MPI_Comm comm = MPI_COMM_NULL;          ///< members: its group's communicator
};

namespace {

constexpr std::size_t kMaxFutures = 16;  // as `rewind run`'s

// A file's one name, whether it exists yet or not: "x.h5", "./x.h5" and a symlink to it
// share it (the name its claim is kept under).
std::string one_name(const std::string& path) { return k::claim_path(path); }

// FILE.branchSTEP.h5 (then -2, -3, ...): a name no file has, nor any of `taken` (one_name).
std::string branch_name(const std::string& file, std::int64_t step, const std::set<std::string>& taken) {
  const std::filesystem::path p(file);
  for (int n = 1;; ++n) {
    const auto stem = p.stem().string() + fmt::format(".branch{}{}", step, n == 1 ? "" : fmt::format("-{}", n));
    auto candidate = (p.parent_path() / (stem + p.extension().string())).string();
    if (!std::filesystem::exists(candidate) && taken.count(one_name(candidate)) == 0) return candidate;
  }
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

// The parameters in force at `from` (the declared values, overridden by what the step
// records), then `changes` (already checked).
std::vector<col::ParameterInfo> parameters_at(const rewind_live& l, const k::StepEntry& from,
                                              const col::ParamValues& values) {
  auto params = l.declared;
  for (const auto& o : from.case_overrides) {
    const auto eq = o.find('=');
    for (auto& p : params)
      if (eq != std::string::npos && p.name == o.substr(0, eq))
        p.value = col::param_value(parse_value(o.substr(eq + 1)));
  }
  return changed(std::move(params), values).first;
}

// The future a branch forks: the running one, or with several the one its step's file names.
std::size_t forked_future(const rewind_live& l, const std::string& named, const std::string& running) {
  std::vector<std::size_t> live_ones;
  for (std::size_t i = 0; i < l.futures.size(); ++i)
    if (!l.futures[i].ended) live_ones.push_back(i);
  if (live_ones.size() == 1) return live_ones.front();
  for (const auto i : live_ones) {
    std::error_code ec;
    if (!named.empty() && (l.futures[i].file == named || std::filesystem::equivalent(l.futures[i].file, named, ec)))
      return i;
  }
  throw std::invalid_argument(
      fmt::format("this code computes {} futures ({}): name the one to fork (--file)", live_ones.size(), running));
}

ForkPlan plan_fork(const rewind_live& l, const live::BranchCommand& b, const std::string& running) {
  ForkPlan p;
  const auto spec0 = k::split_step_spec(b.from);
  p.forked = forked_future(l, spec0.first, running);
  const auto& src = l.futures[p.forked];
  const std::size_t n = b.futures.size();
  if (n < 1 || n > kMaxFutures)
    throw std::invalid_argument(fmt::format("a branch has 1 to {} futures, not {}", kMaxFutures, n));
  if (static_cast<int>(n) > l.max_futures)
    throw std::invalid_argument(fmt::format(
        "this code computes {} at a time, not {}: a code that continues on its BRANCH event's communicator "
        "allows more with rewind_live_allow_futures (docs/adopting.md, \"Several futures at once\")",
        l.max_futures == 1 ? std::string("one future") : fmt::format("up to {} futures", l.max_futures), n));
  if (src.file.empty()) throw std::invalid_argument("this run writes no file: there is nothing to branch from");
  if (static_cast<int>(n) > src.size) {
    int ranks = 0;
    MPI_Comm_size(l.compute, &ranks);
    throw std::invalid_argument(fmt::format(
        "{} futures need {} compute ranks, one group each; {} computes on {}: start the code on {} or more compute "
        "ranks, or fork fewer futures",
        n, n, src.file, src.size, ranks + static_cast<int>(n) - src.size));
  }
  for (const auto& f : b.futures) p.changes.push_back(changed(src.parameters, f.values).second);
  // The forked future's current state, if its file does not hold it yet, counts as the
  // file's last checkpoint: the fork writes it first (nothing is lost), so "latest" or
  // its step number names it.
  std::optional<k::StepEntry> pending;
  auto steps = k::Reader::open(src.file).selectable_steps();
  if (steps.empty() || src.step > steps.back().step) {
    k::StepEntry e;
    e.step = src.step;
    e.time = src.time;
    e.kind = k::StepKind::checkpoint;
    e.committed = true;
    e.case_overrides = src.changes;
    pending = e;
  }
  // No file ("@SEL", the collector's default): a step on the timeline of the forked
  // future's file, through its parents (docs/file-format.md §6, "A branch's timeline").
  const bool named = !spec0.first.empty();
  const auto spec =
      k::split_step_spec(named ? b.from : k::timeline_spec(src.file, spec0.second, pending ? &*pending : nullptr));
  const std::string& path = spec.first;  // not a structured binding: the lambda below captures it
  const auto same = [&](const std::string& f) {
    std::error_code ec;
    return f == path || std::filesystem::equivalent(f, path, ec);
  };
  if (named && std::none_of(l.files.begin(), l.files.end(), same))
    throw std::invalid_argument(fmt::format("{} is not one of this run's files", path));
  p.parent = path;
  if (pending && same(src.file)) {
    steps.push_back(*pending);
    p.from = k::select_step(steps, spec.second, path);
  } else {
    p.from = k::Reader::open(path).find_step(spec.second);
  }
  if (p.from.kind != k::StepKind::checkpoint)
    throw std::invalid_argument(
        fmt::format("{}: step {} is a visualisation output; a branch needs a checkpoint", path, p.from.step));
  std::set<std::string> taken;
  for (const auto& f : b.futures) {
    const auto out = f.output.empty() ? branch_name(path, p.from.step, taken) : f.output;
    if (!f.output.empty()) k::check_output_target(out);  // before anything opens it (a FIFO, a device)
    if (std::filesystem::exists(out))
      throw std::invalid_argument(fmt::format("{} exists; a branch never overwrites a file", out));
    if (!taken.insert(one_name(out)).second)
      throw std::invalid_argument(fmt::format("two futures would write {}", out));
    p.outputs.push_back(out);
  }
  return p;
}

// Collective over `comm`: the lowest failing rank's problem ("" = none), on every rank.
std::string agreed_problem(MPI_Comm comm, const std::string& problem) {
  try {
    agree_or_throw(comm, problem);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

// A fork's groups: the forked future's G ranks cut into K consecutive groups, floor(G/K)
// each, the first G mod K one more. Collective over the forked future's ranks (members).
ForkGroups split_groups(const Future& src, int n, int rank, bool member) {
  ForkGroups g;
  for (int j = 0, at = src.first; j < n; ++j) {
    g.size.push_back(src.size / n + (j < src.size % n ? 1 : 0));
    g.first.push_back(at);
    at += g.size.back();
  }
  if (!member) return g;
  while (!(rank >= g.first[g.mine] && rank < g.first[g.mine] + g.size[g.mine])) ++g.mine;
  g.comm = src.comm;
  if (n > 1) {
    g.split = std::make_shared<rwd::mpi::Comm>(
        rwd::mpi::Comm::split(src.comm, static_cast<int>(g.mine), rank, "rewind_live"));
    g.comm = g.split->get();
  }
  return g;
}

// Every future of a fork, as every rank knows it (members: their own group's communicator).
std::vector<Future> born_futures(const rewind_live& l, const ForkPlan& p, const live::BranchCommand& b,
                                 const ForkGroups& g, const Future& src, bool member) {
  std::vector<Future> born;
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    Future f;
    f.file = p.outputs[k];
    f.parent = p.parent;
    f.changes = p.changes[k];
    f.first = g.first[k];
    f.size = g.size[k];
    f.parameters = parameters_at(l, p.from, b.futures[k].values);
    f.step = p.from.step;
    f.time = p.from.time;
    if (member && k == g.mine) {
      f.comm = g.comm;
      f.owned = g.split ? g.split : src.owned;  // one future: the forked one's ranks, as they were
    }
    born.push_back(std::move(f));
  }
  return born;
}

}  // namespace

// Each group creates its future's file (if any cannot, none is kept: the run goes on
// where it was); then the code's handle writes its future's (the old file closed, its
// claim released). Collective over the job's compute ranks.
void Host::open_future(const ForkPlan& p, const ForkGroups& g, bool member) {
  rewind_file* next = nullptr;
  std::string problem;
  if (member) {
    std::vector<const char*> kv;
    for (const auto& c : p.changes[g.mine]) kv.push_back(c.c_str());
    rewind_config options;
    options.io = file_->io;
    if (rewind_file_create_branch(&next, g.comm, p.outputs[g.mine].c_str(), p.parent.c_str(), p.from.step,
                                  static_cast<int>(kv.size()), kv.data(), &options) != REWIND_OK)
      problem = rewind_last_error();
  }
  if (problem = agreed_problem(l_.compute, problem); !problem.empty()) {
    if (next != nullptr) {
      int group_rank = 0;
      MPI_Comm_rank(g.comm, &group_rank);
      (void)rewind_file_close(next);
      std::error_code ec;
      if (group_rank == 0) std::filesystem::remove(p.outputs[g.mine], ec);
    }
    throw std::runtime_error(problem);  // the same on every rank
  }
  if (!member) return;
  file_->writer.close();
  std::swap(file_->writer, next->writer);
  std::swap(file_->claim, next->claim);
  std::swap(file_->comm, next->comm);
  std::swap(file_->averages, next->averages);
  file_->fluid.clear();
  file_->checked_tree = 0;
  file_->last_time = next->last_time;  // a new file: its times start again
  file_->last_dt = 0.0;
  delete next;
}

void Host::branch(const live::BranchCommand& b, live::Reply& reply) {
  ForkPlan p;
  std::string problem;
  try {
    p = plan_fork(l_, b, running_files());
  } catch (const std::exception& e) {
    problem = e.what();
  }
  agree_or_throw(l_.compute, problem);
  auto& src = l_.futures[p.forked];
  const bool member = l_.mine == p.forked && file_ != nullptr && g_ != nullptr;
  // Nothing is lost: the forked future's current state goes into its file first.
  problem.clear();
  if (member && src.step > file_->writer.last_step() &&
      rewind_file_write(file_, src.step, src.time, file_->last_dt, REWIND_CHECKPOINT, g_, 0, nullptr, 0) != REWIND_OK)
    problem = rewind_last_error();
  if (problem = agreed_problem(l_.compute, problem); !problem.empty()) throw std::runtime_error(problem);
  const auto n = static_cast<int>(p.outputs.size());
  const ForkGroups g = split_groups(src, n, l_.rank, member);
  open_future(p, g, member);
  const auto born = born_futures(l_, p, b, g, src, member);
  const std::size_t j = g.mine;
  if (member) queue_branch(born[j], src.parameters, p, static_cast<int>(j));
  if (member && n > 1 && src.owned) l_.retired.push_back(src.owned);  // the code may hold it until its event
  const auto at = static_cast<std::ptrdiff_t>(p.forked);
  l_.futures.erase(l_.futures.begin() + at);
  l_.futures.insert(l_.futures.begin() + at, born.begin(), born.end());
  if (member) l_.mine = p.forked + j;
  else if (l_.mine > p.forked) l_.mine += static_cast<std::size_t>(n) - 1;
  if (member) record();  // its file records its parameters (those of the step, and its changes)
  for (const auto& o : p.outputs) l_.files.push_back(o);
  l_.forked = true;
  cur_ = at_ = std::min(at_, l_.futures.size() - 1);
  ready_ = averaged_ = false;
  reply.file = p.outputs.front();
  reply.files = p.outputs;
  reply.parent = p.parent;
  reply.step = p.from.step;
  reply.time = p.from.time;
}

// A member's events of a fork, after those of this boundary so far: BRANCH (which future,
// its changes, the communicator it continues on), then a SET for every parameter whose
// value at the branch's step, with the future's changes, differs from `before` (in force
// in the code until now).
void Host::queue_branch(const Future& f, const std::vector<col::ParameterInfo>& before, const ForkPlan& p, int j) {
  Event e;
  e.kind = REWIND_EVENT_BRANCH;
  e.parent = p.parent;
  e.file = f.file;
  e.step = p.from.step;
  e.time = p.from.time;
  e.future = j;
  e.futures = static_cast<int>(p.outputs.size());
  e.changes = joined(f.changes, ";");
  e.comm = f.comm;
  l_.events.push_back(std::move(e));
  for (std::size_t i = 0; i < f.parameters.size(); ++i)
    if (f.parameters[i].value != before[i].value) {
      Event s;
      s.kind = REWIND_EVENT_SET;
      s.name = f.parameters[i].name;
      s.value = col::components(f.parameters[i].value);
      l_.events.push_back(std::move(s));
    }
}

}  // namespace rwd::api
