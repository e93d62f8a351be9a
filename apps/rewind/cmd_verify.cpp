// `rewind verify FILE[@STEP]`: check every committed step of a file (or one step)
// against the checksums stored with it, and the step index against the steps.
//
// Exit 0 when everything that is covered matches; 1 when anything is damaged: a row
// that does not match its checksum, a dataset that cannot be read or does not match its
// whole-dataset checksum (level_offsets, /common's datasets, format 1.6), a step group
// HDF5 cannot read, an index that disagrees with the steps, a file whose own metadata
// is damaged; 2 on an error (a missing file or step, a bad option), as `diff` does. One
// line per damaged step and dataset, with a count of rows (--rows: one line per row).
// What a file's format cannot prove (no checksums before 1.4 or with checksums = false,
// level_offsets and /common before 1.6) is said once and does not change the exit code.
// A file a job is writing is opened and listed under its step lock (exit 2, "being
// written", when a step keeps it over 5 s). Serial and read-only.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "commands.hpp"
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/step_lock.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

struct VerifyOptions {
  std::string spec;
  bool quiet = false;
  bool rows = false;
};

bool is_damage(k::ErrorKind kind) {
  return kind == k::ErrorKind::corrupt || kind == k::ErrorKind::truncated || kind == k::ErrorKind::missing_object ||
         kind == k::ErrorKind::bad_shape;
}

// The step a numeric selector names ("42"), or -1.
std::int64_t step_number(const std::string& sel) {
  char* end = nullptr;
  const long long n = std::strtoll(sel.c_str(), &end, 10);
  return !sel.empty() && *end == '\0' && sel[0] != '#' ? n : -1;
}

// What verify reads first: the file opened, its index checked, the steps to verify.
struct Listing {
  std::optional<k::Reader> reader;
  std::string unopenable;  ///< the file itself is damaged: why
  std::vector<k::Reader::IndexProblem> index;
  std::vector<k::StepEntry> steps;
};

Listing list(const std::string& file, const std::string& sel, bool one) {
  Listing l;
  try {
    l.reader.emplace(k::Reader::open(file));
  } catch (const k::FileError& e) {
    if (!is_damage(e.kind())) throw;
    l.unopenable = e.problem();
    return l;
  }
  const k::Reader& reader = *l.reader;
  auto& index = l.index;
  index = reader.check_index();
  if (!one) {
    l.steps = reader.selectable_steps();  // a damaged committed step is one of them, reported below
    return l;
  }
  try {
    l.steps.push_back(reader.find_step(sel));
  } catch (const k::FileError& e) {
    // A step that is gone because its group is damaged is damage, not a wrong selector.
    const auto n = step_number(sel);
    const bool listed = std::any_of(index.begin(), index.end(), [&](const auto& p) { return p.step == n; });
    if (!is_damage(e.kind()) && !(e.kind() == k::ErrorKind::no_such_step && listed)) throw;
    if (!listed) index.push_back({n, e.problem()});
  }
  const auto n = l.steps.empty() ? step_number(sel) : l.steps[0].step;
  std::erase_if(index, [&](const k::Reader::IndexProblem& p) { return p.step != n && p.step != -1; });
  return l;
}

// A job writing the file changes its structures during a step: verify opens and lists
// it under the writer's step lock, shared, as `serve` does (docs/file-format.md §5,
// "Reading a file while it is written"). Where that lock cannot be had, what fails while
// a live job claims the file is tried again, then said to be the write's, never damage.
Listing list_settled(const std::string& file, const std::string& sel, bool one) {
  for (int attempt = 1;; ++attempt) {
    const auto lock = k::StepLock::take(file, k::StepLock::Mode::shared, std::chrono::seconds(5));
    if (lock.supported() && !lock.held())
      throw std::runtime_error(file + ": being written: its writer has held a step for over 5 s; try again");
    std::string why;
    try {
      Listing l = list(file, sel, one);
      if (l.unopenable.empty()) return l;
      why = l.unopenable;
      if (lock.held()) return l;
    } catch (const k::FileError& e) {
      if (lock.held()) throw;
      why = e.problem();
    }
    const auto claim = k::read_claim(file);
    if (!claim || !claim->live) return list(file, sel, one);  // at rest: its answer
    if (attempt == 20)
      throw std::runtime_error(fmt::format("{}: being written by {}; it changed while verify read it ({}): try again",
                                           file, claim->record.describe(), why));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int run_verify(const VerifyOptions& o) {
  const auto [file, sel] = k::split_step_spec(o.spec);
  Listing l = list_settled(file, sel, o.spec.find('@') != std::string::npos);
  if (!l.unopenable.empty()) {
    fmt::print("{}: DAMAGED: {}\n", file, l.unopenable);
    return 1;
  }
  const k::Reader& reader = *l.reader;
  const auto& index = l.index;
  const auto& steps = l.steps;
  if (const auto missing = reader.bytes_missing(); missing > 0)
    fmt::print("{}: truncated: {} byte{} short of its end; the steps that reach into it are damaged, the others "
               "read as ever\n",
               file, missing, missing == 1 ? "" : "s");
  std::int64_t damaged_steps = 0, unverified = 0, rows = 0;
  std::set<std::string> uncovered;
  for (const auto& e : steps) {
    k::Reader::Verification v;
    try {
      if (!e.damage.empty()) throw k::FileError(k::ErrorKind::corrupt, file, e.damage);
      v = reader.verify_step(e.step);
    } catch (const k::FileError& err) {  // its metadata cannot be read (a truncated file): name it, go on
      if (!is_damage(err.kind()) && err.kind() != k::ErrorKind::io) throw;
      v.damaged.push_back({"", 0, err.problem()});
    }
    rows += v.rows;
    for (const auto& u : v.uncovered) uncovered.insert(u);
    const auto head = e.damage.empty() ? fmt::format("step {:>8}  t = {:<12.6g}", e.step, e.time)
                                       : fmt::format("step {:>8}  t = {:<12}", e.step, "?");
    if (!v.damaged.empty()) {
      ++damaged_steps;
      for (const auto& d : v.damaged)
        fmt::print("{} DAMAGED {}{}\n", head, d.dataset.empty() ? "" : d.dataset + ": ", d.problem);
      if (o.rows)
        for (const auto& p : v.problems) fmt::print("{}   {}\n", head, p);
    } else if (v.datasets == 0) {
      ++unverified;
      if (!o.quiet) fmt::print("{} no checksums (not verified)\n", head);
    } else if (!o.quiet) {
      fmt::print("{} ok: {} rows of {} datasets\n", head, v.rows, v.datasets);
    }
  }
  for (const auto& p : index) fmt::print("index  DAMAGED {}\n", p.problem);
  const auto [major, minor] = reader.format_version();
  if (major == 1 && minor < 6) uncovered.insert("/common's datasets");
  if (!uncovered.empty() && !o.quiet)
    fmt::print("note: format {}.{}: not covered by checksums, so not verified: {}\n", major, minor,
               fmt::join(uncovered, ", "));
  const auto verified = static_cast<std::int64_t>(steps.size()) - unverified - damaged_steps;
  if (damaged_steps > 0 || !index.empty()) {
    std::string what = damaged_steps > 0
                           ? fmt::format("{} of {} steps damaged, {} verified", damaged_steps, steps.size(), verified)
                           : fmt::format("{} {} verified", verified, verified == 1 ? "step" : "steps");
    if (unverified > 0) what += fmt::format(", {} without checksums", unverified);
    if (!index.empty())
      what +=
          fmt::format("; the index and the steps disagree ({} {})", index.size(), index.size() == 1 ? "line" : "lines");
    fmt::print("{}: DAMAGED: {}\n", file, what);
    return 1;
  }
  if (!o.quiet)
    fmt::print("{}: {} {} verified ({} rows){}\n", file, verified, verified == 1 ? "step" : "steps", rows,
               unverified > 0 ? fmt::format(", {} without checksums", unverified) : "");
  return 0;
}

const Registration reg{Command{
    "verify", "Check a file's steps against their stored checksums and its index (exit 0 ok, 1 damaged, 2 error)", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<VerifyOptions>();
      sub.add_option("file", o->spec, "FILE[@STEP]: every committed step, or one (latest, N, #i or t=T)")->required();
      sub.add_flag("-q,--quiet", o->quiet, "Print only what is damaged");
      sub.add_flag("--rows", o->rows, "Also one line per damaged row (step, dataset, grid row)");
      return [o] { return run_verify(*o); };
    },
    42, 2}};

}  // namespace
}  // namespace rwd::cli
