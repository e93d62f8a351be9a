// The C API's live host (live_impl.hpp): where each future is, its grids for a window,
// its parameters and their steering, and the rounds in which every compute rank meets
// the link once per running future.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <thread>

#include "live_impl.hpp"

namespace rwd::api {

namespace live = rwd::live;

std::string value_text(const std::vector<double>& v) {
  std::string text;
  for (const double x : v) text += fmt::format("{}{}", text.empty() ? "" : ", ", x);
  return v.size() == 1 ? text : "[" + text + "]";
}

std::vector<double> parse_value(const std::string& text) {
  std::vector<double> out;
  std::string t = text;
  for (char& c : t)
    if (c == '[' || c == ']' || c == ',') c = ' ';
  std::size_t at = 0;
  while (at < t.size()) {
    std::size_t used = 0;
    const auto rest = t.substr(at);
    if (rest.find_first_not_of(' ') == std::string::npos) break;
    out.push_back(std::stod(rest, &used));
    at += used;
  }
  return out;
}

std::pair<std::vector<col::ParameterInfo>, std::vector<std::string>> changed(std::vector<col::ParameterInfo> params,
                                                                             const col::ParamValues& values) {
  std::vector<std::string> applied;
  for (const auto& change : values) {
    const std::string& name = change.first;  // not a structured binding: the lambda below captures it
    const std::vector<double> v = col::components(change.second);
    auto it = std::find_if(params.begin(), params.end(), [&](const col::ParameterInfo& p) { return p.name == name; });
    if (it == params.end())
      throw std::invalid_argument(fmt::format("'{}' is not a steerable parameter of this run", name));
    const std::size_t n = col::components(it->value).size();
    if (v.size() != n) throw std::invalid_argument(fmt::format("{}: {} components, not {}", name, n, v.size()));
    for (const double x : v)
      if (!std::isfinite(x) || x < it->min || x > it->max)
        throw std::invalid_argument(fmt::format("{} = {}: outside [{}, {}]", name, x, it->min, it->max));
    it->value = change.second;
    applied.push_back(fmt::format("{}={}", name, value_text(v)));
  }
  return {std::move(params), std::move(applied)};
}

live::Status Host::where() {
  const auto& f = l_.futures[cur_];
  live::Status s;
  s.step = f.step;
  s.time = f.time;
  s.file = f.file;
  s.parent = f.parent;
  s.files = l_.files;
  if (l_.futures.size() > 1)
    for (const auto& x : l_.futures) {
      const auto state = x.ended      ? col::RunState::finished
                         : x.stopping ? col::RunState::stopping
                         : x.paused   ? col::RunState::paused
                                      : col::RunState::running;
      const double wall = x.started > 0.0 ? MPI_Wtime() - x.started : 0.0;
      s.futures.push_back({x.file, x.parent, state, x.step, x.time, x.steps, wall, x.changes, x.first, x.size});
    }
  return s;
}

const k::LocalGrids& Host::grids() {
  if (ready_) return grids_;
  grids_ = {};
  grids_.block = l_.common.block;
  grids_.halo = g_ != nullptr ? g_->halo : 0;
  if (mine_in_focus()) grids_.grids = records_of(*g_, l_.common.block);  // the other ranks: none of its grids
  const auto nv = l_.common.variables.size();
  std::vector<int> slots(nv);
  std::iota(slots.begin(), slots.end(), 0);
  for (auto& r : grids_.grids) r.fields.resize(std::max(nv, r.fields.size()), nullptr);
  averages_.check(l_.compute, grids_, slots, refinement());  // the parents are averaged on demand
  ready_ = true;
  return grids_;
}

// The level of detail: parents without arrays get their children's averages, once per
// focus and only for a window above the leaves (the link asks).
void Host::sync_parents() {
  if (averaged_) return;
  (void)grids();
  std::vector<int> slots(l_.common.variables.size());
  std::iota(slots.begin(), slots.end(), 0);
  averages_.fill(l_.compute, grids_, slots, refinement());
  averaged_ = true;
}

std::array<int, 3> Host::refinement() const {
  const int r = l_.common.refinement;
  return {r, r, l_.common.dim == 3 ? r : 1};
}

int Host::variable(const std::string& name) {
  const auto& v = l_.common.variables;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].name == name) return static_cast<int>(i);
  std::string names;
  for (const auto& x : v) names += (names.empty() ? "" : ", ") + x.name;
  throw std::invalid_argument(fmt::format("unknown variable '{}' (there are {})", name, names));
}

std::size_t Host::future_of(const std::string& file) const {
  for (std::size_t i = 0; i < l_.futures.size(); ++i) {
    std::error_code ec;
    if (l_.futures[i].file == file || std::filesystem::equivalent(l_.futures[i].file, file, ec)) {
      if (l_.futures[i].ended)
        throw std::invalid_argument(fmt::format("{} has finished; its steps are in its file", file));
      return i;
    }
  }
  throw std::invalid_argument(fmt::format("{} is not a future of this run ({})", file, running_files()));
}

// "" = every future still running; else the one writing `file`.
std::vector<std::size_t> Host::named(const std::string& file) const {
  if (!file.empty()) return {future_of(file)};
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < l_.futures.size(); ++i)
    if (!l_.futures[i].ended) out.push_back(i);
  return out;
}

std::string Host::running_files() const {
  std::string out;
  for (const auto& f : l_.futures)
    if (!f.ended) out += (out.empty() ? "" : ", ") + (f.file.empty() ? std::string("no file") : f.file);
  return out.empty() ? std::string("none running") : out;
}

void Host::focus(const std::string& file) {
  const std::size_t to = file.empty() ? at_ : future_of(file);
  if (to == cur_) return;
  cur_ = to;
  ready_ = averaged_ = false;
}

std::uint64_t Host::tree_version() { return mine_in_focus() ? g_->generation + 1 : 0; }

std::vector<std::string> Host::set(const col::ParamValues& values, const std::string& file) {
  // Every future it names checks the values first (on every rank alike): all, or none.
  const auto targets = named(file);
  std::vector<std::vector<col::ParameterInfo>> next;
  std::vector<std::string> applied;
  for (const auto t : targets) {
    auto [params, changes] = changed(l_.futures[t].parameters, values);
    next.push_back(std::move(params));
    if (applied.empty()) applied = std::move(changes);
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto& f = l_.futures[targets[i]];
    f.parameters = std::move(next[i]);
    if (targets[i] != l_.mine) continue;
    for (const auto& [name, value] : values) {
      Event e;
      e.kind = REWIND_EVENT_SET;
      e.name = name;
      e.value = col::components(value);
      l_.events.push_back(std::move(e));
    }
    record();
  }
  return applied;
}

// The steered parameters in force go with every step this rank's file writes from now on.
void Host::record() {
  if (file_ == nullptr) return;
  const auto& params = l_.my().parameters;
  file_->overrides.clear();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].value != l_.declared[i].value)
      file_->overrides.push_back(fmt::format("{}={}", params[i].name, value_text(col::components(params[i].value))));
}

void Host::control(col::ControlAction a, const std::string& file) {
  if (!file.empty() && a == col::ControlAction::pause && l_.futures.size() == 1)
    throw std::invalid_argument("this code computes one future: pause the run (no file named)");
  // No file: pause is the link's (the whole job); resume and stop act on every future.
  if (file.empty() && a == col::ControlAction::pause) return;
  for (const auto t : named(file)) {  // refuses a file that is no running future
    auto& f = l_.futures[t];
    f.paused = a == col::ControlAction::pause;
    if (a != col::ControlAction::stop) continue;
    f.stopping = true;
    if (t == l_.mine) {
      Event e;
      e.kind = REWIND_EVENT_STOP;
      l_.events.push_back(std::move(e));
    }
  }
}

namespace {

// Every future's step, time and end from its members, the same on every rank (one
// allreduce over the job's compute ranks; each rank speaks for its own future).
void share_words(rewind_live& l) {
  const std::size_t n = l.futures.size();
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  std::vector<double> mine(3 * n, kNone), all(3 * n);
  const auto& f = l.my();
  mine[3 * l.mine] = static_cast<double>(f.step);
  mine[3 * l.mine + 1] = f.time;
  mine[3 * l.mine + 2] = f.ended ? 1.0 : 0.0;
  MPI_Allreduce(mine.data(), all.data(), static_cast<int>(3 * n), MPI_DOUBLE, MPI_MAX, l.compute);
  for (std::size_t k = 0; k < n; ++k) {
    auto& x = l.futures[k];
    const auto step = static_cast<std::int64_t>(all[3 * k]);
    if (step != x.shared && !x.fresh) ++x.steps;
    x.step = x.shared = step;
    x.time = all[3 * k + 1];
    x.ended = all[3 * k + 2] > 0.0;
  }
}

}  // namespace

void nap_if_idle(const rewind_live& l) {
  if (std::all_of(l.futures.begin(), l.futures.end(), [](const Future& f) { return f.ended || f.paused; }))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

void hold_while_paused(rewind_live& l, const rewind_grids* g, rewind_file* file) {
  while (l.my().paused && !l.my().ended) {
    nap_if_idle(l);
    (void)round(l, g, file);
  }
}

bool round(rewind_live& l, const rewind_grids* g, rewind_file* file) {
  share_words(l);
  l.forked = false;
  bool stepped = true;  // the job's step counter moves once a round
  bool running = false;
  for (std::size_t k = 0; k < l.futures.size() && !l.forked; ++k) {
    auto& f = l.futures[k];
    if (f.ended) continue;
    running = true;
    const bool first = std::exchange(f.fresh, false);
    if (first) f.started = MPI_Wtime();
    Host host(l, k, g, file);
    l.link->at_boundary(host, first, stepped && !first);
    stepped = false;
  }
  return running || l.forked;
}

}  // namespace rwd::api
