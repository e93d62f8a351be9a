#include "rewind/kernel/lineage.hpp"

#include <dirent.h>
#include <unistd.h>
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::kernel {

namespace {
std::string dir_of(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? "." : (s == 0 ? "/" : p.substr(0, s));
}
std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}
/// parent_file as stored, resolved: absolute as is, relative against the child's
/// directory; if that is not there, the absolute path recorded when branching.
std::string resolve_parent(const std::string& child, const Lineage& l) {
  const std::string& parent = l.parent_file;
  if (parent.empty() || parent[0] == '/') return parent;
  std::string p = dir_of(child) + "/" + parent;
  if (::access(p.c_str(), F_OK) != 0 && !l.parent_file_absolute.empty() &&
      ::access(l.parent_file_absolute.c_str(), F_OK) == 0)
    p = l.parent_file_absolute;
  return p;
}
LineageNode load(const std::string& path) {
  LineageNode n;
  n.path = path;
  try {
    Reader r = Reader::open(path);
    n.lineage = r.common().lineage;
    n.steps = r.steps(true);
  } catch (const FileError& e) {
    n.error = e.what();
  }
  return n;
}
}  // namespace

std::vector<LineageNode> lineage_chain(const std::string& path) {
  std::vector<LineageNode> chain;
  std::set<std::string> seen;
  std::string p = path;
  while (true) {
    if (!seen.insert(real(p)).second) {
      chain.back().error = "lineage cycle at " + p;
      break;
    }
    chain.push_back(load(p));
    const auto& n = chain.back();
    if (!n.error.empty() || !n.lineage.is_branch()) break;
    p = resolve_parent(p, n.lineage);
  }
  return chain;
}

std::vector<std::string> lineage_problems(const std::string& path) {
  const auto chain = lineage_chain(path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const auto& n = chain[i];
    if (!n.error.empty()) {
      out.push_back(i == 0 ? fmt::format("{}: {}", n.path, n.error)
                           : fmt::format("{}: its parent {} cannot be read: {}", chain[i - 1].path, n.path, n.error));
      break;
    }
    if (i == 0) continue;
    const auto& child = chain[i - 1].lineage;
    const bool has = std::any_of(n.steps.begin(), n.steps.end(), [&](const StepEntry& e) {
      return e.step == child.parent_step && e.time == child.parent_time;
    });
    if (!has)
      out.push_back(fmt::format("{}: branched from step {} (t={}) of {}, which no longer holds it (overwritten?)",
                                chain[i - 1].path, child.parent_step, child.parent_time, n.path));
  }
  return out;
}

std::vector<TimelineEntry> timeline(const std::string& path) {
  auto chain = lineage_chain(path);
  std::vector<TimelineEntry> out;
  // From the root ancestor forward: each file contributes its steps up to the branch
  // point of the next file in the chain.
  for (std::size_t i = chain.size(); i-- > 0;) {
    const auto& n = chain[i];
    if (!n.error.empty()) throw FileError(ErrorKind::not_found, n.path, "lineage broken: " + n.error);
    const std::int64_t cut = i > 0 ? chain[i - 1].lineage.parent_step : INT64_MAX;
    // Steps of this file replace any later parent steps (a branch rewrites the future).
    for (const auto& s : n.steps)
      if (s.step <= cut) out.push_back({n.path, s});
  }
  return out;
}

namespace {
// "key=value" lines as key -> value.
std::map<std::string, std::string> settings(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> m;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    m[o.substr(0, eq)] = eq == std::string::npos ? "" : o.substr(eq + 1);
  }
  return m;
}
}  // namespace

std::vector<SteeringChange> steering_changes(const std::vector<TimelineEntry>& timeline) {
  std::vector<SteeringChange> out;
  std::map<std::string, std::string> before;
  const std::string* file = nullptr;
  for (const auto& e : timeline) {
    if (!e.step.damage.empty()) continue;
    // A branch's file starts from its own case (the parent's, its changes and what was
    // steered until the branch point): its lineage says what changed there.
    if (file != nullptr && *file != e.path) before.clear();
    file = &e.path;
    const auto now = settings(e.step.case_overrides);
    std::vector<std::string> changes;
    for (const auto& [key, value] : now)
      if (const auto it = before.find(key); it == before.end() || it->second != value)
        changes.push_back(key + "=" + value);
    for (const auto& [key, value] : before)
      if (!now.contains(key)) changes.push_back(key + " back to the case's value");
    if (!changes.empty()) out.push_back({e.path, e.step, std::move(changes)});
    before = now;
  }
  return out;
}

TimelineEntry select_on_timeline(const std::vector<TimelineEntry>& timeline, const std::string& selector,
                                 const std::string& file) {
  std::vector<StepEntry> steps;
  steps.reserve(timeline.size());
  for (const auto& e : timeline) steps.push_back(e.step);
  const StepEntry chosen = select_step(steps, selector, file);
  const auto it = std::find_if(timeline.rbegin(), timeline.rend(), [&](const TimelineEntry& e) {
    return e.step.step == chosen.step && e.step.time == chosen.time;
  });
  return *it;
}

std::string branch_registry(const std::string& parent) { return parent + ".branches"; }

bool register_branch(const std::string& branch, const std::string& parent, std::string* why) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(dir_of(parent), ec), ec);
  const fs::path child = fs::weakly_canonical(fs::absolute(branch, ec), ec);
  if (ec) return false;
  const std::string entry = child.lexically_relative(dir).string();
  const std::string registry = branch_registry(parent);
  std::string text;
  {
    std::ifstream in(registry);
    for (std::string line; std::getline(in, line);) {
      if (line == entry) return true;
      text += line + '\n';
    }
  }
  // Whole or not at all: the registry is replaced by a complete copy, so a full disk
  // leaves the old one (an append that failed half-way left it empty or cut).
  const std::string tmp = registry + ".tmp";
  errno = 0;
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text << entry << '\n';
    ok = static_cast<bool>(out.flush());
  }
  ok = ok && std::rename(tmp.c_str(), registry.c_str()) == 0;
  if (!ok) {
    if (why) *why = errno != 0 ? std::strerror(errno) : "cannot write it";
    std::remove(tmp.c_str());
  }
  return ok;
}

std::vector<std::string> find_branches(const std::string& path, const std::string& directory) {
  std::vector<std::string> candidates;
  if (DIR* d = ::opendir(directory.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() >= 4 && n.substr(n.size() - 3) == ".h5") candidates.push_back(directory + "/" + n);
    }
    ::closedir(d);
  }
  std::ifstream registry(branch_registry(path));
  for (std::string line; std::getline(registry, line);)
    if (!line.empty()) candidates.push_back(line[0] == '/' ? line : dir_of(path) + "/" + line);
  const std::string target = real(path);
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& p : candidates) {
    if (::access(p.c_str(), F_OK) != 0 || !seen.insert(real(p)).second) continue;  // stale or listed twice
    LineageNode node = load(p);
    if (!node.error.empty() || !node.lineage.is_branch()) continue;
    if (real(resolve_parent(p, node.lineage)) == target) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// One file of the tree: "├─ NAME  (from step S t=T; changed: ...)  N steps, t=A..B", the
// file asked about marked "* (this file)"; `lead` is what precedes its connector, its
// children drawn below it ("│  " continues a sibling still to come).
void print_node(std::string& out, const std::string& path, const std::string& marked, const std::string& lead,
                const std::string& connector, std::set<std::string>& visited, const std::vector<LineageNode>& chain) {
  if (!visited.insert(real(path)).second || lead.size() > 64 * 4) return;
  LineageNode n = load(path);
  std::string line = lead + connector + path;
  if (real(path) == marked) line += "  * (this file)";
  if (!n.error.empty()) {
    line += "  [unreadable: " + n.error + "]";
  } else {
    if (n.lineage.is_branch()) {
      line += fmt::format("  (from step {} t={:.6g}", n.lineage.parent_step, n.lineage.parent_time);
      if (!n.lineage.changes.empty()) {
        line += "; changed:";
        for (const auto& c : n.lineage.changes) line += " " + c;
      }
      line += ")";
    }
    if (n.steps.empty()) line += "  no committed steps";
    else
      line += fmt::format("  {} step{}, t={:.6g}..{:.6g}", n.steps.size(), n.steps.size() == 1 ? "" : "s",
                          n.steps.front().time, n.steps.back().time);
  }
  out += line + "\n";
  std::set<std::string> children;
  for (const auto& b : find_branches(path, dir_of(path))) children.insert(b);
  // Chain members in other directories are branches too.
  for (const auto& c : chain)
    if (c.lineage.is_branch() && real(resolve_parent(c.path, c.lineage)) == real(path)) {
      bool dup = false;
      for (const auto& x : children) dup = dup || real(x) == real(c.path);
      if (!dup) children.insert(c.path);
    }
  const std::string below = lead + (connector == "├─ " ? "│  " : connector.empty() ? "" : "   ");
  std::size_t i = 0;
  for (const auto& ch : children)
    print_node(out, ch, marked, below, ++i == children.size() ? "└─ " : "├─ ", visited, chain);
}
}  // namespace

std::string format_branch_tree(const std::string& path) {
  auto chain = lineage_chain(path);
  std::string out;
  std::set<std::string> visited;
  print_node(out, chain.back().path, real(path), "", "", visited, chain);
  return out;
}

std::string timeline_spec(const std::string& current, const std::string& selector, const StepEntry* pending) {
  std::vector<TimelineEntry> line;
  try {
    line = timeline(current);
  } catch (const FileError&) {
    return current + "@" + selector;  // a parent gone: the file's own steps (its problem is said elsewhere)
  }
  if (pending != nullptr && (line.empty() || pending->step > line.back().step.step))
    line.push_back({current, *pending});
  const auto e = select_on_timeline(line, selector, current);
  if (e.path == current) return current + "@" + selector;
  // A parent's step: T before the branch point finds the same step there; #i and N become
  // the step's number in the parent.
  return e.path + "@" + (selector.rfind("t=", 0) == 0 ? selector : std::to_string(e.step.step));
}

}  // namespace rwd::kernel
