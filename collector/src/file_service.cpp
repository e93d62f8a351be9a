// Offline windows: kernel::Reader + window::select + read_rows of the selected rows
// only + window::extract (see file_service.hpp).
#include "rewind/collector/file_service.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/lineage.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/step_lock.hpp"
#include "rewind/window/kernel_view.hpp"
#include "rewind/window/select.hpp"

namespace rwd::collector {

namespace k = rwd::kernel;
namespace win = rwd::window;

namespace {
/// What tells that a file changed: which file, its size, its modification time (ns).
struct Stamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  std::int64_t mtime_ns = 0;
  bool operator==(const Stamp&) const = default;
};

Stamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, st.st_size, std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}

/// Longest wait for a writer to finish a step before a request is answered busy.
constexpr std::chrono::milliseconds kWriterWait{5000};
/// Where the writer's lock cannot be had (a file system without OFD locks), a request
/// that fails on a file modified within kSettle may have met a step half written: it is
/// tried again on a fresh open, kRetryPause apart, kAttempts times at most (about 2 s).
constexpr std::chrono::seconds kSettle{2};
constexpr int kAttempts = 100;
constexpr std::chrono::milliseconds kRetryPause{20};

bool recently_modified(const std::string& path) {
  const Stamp s = stamp_of(path);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
  return s.size >= 0 && now.count() - s.mtime_ns < std::chrono::nanoseconds(kSettle).count();
}

bool same_geometry(const k::CommonInfo& a, const k::CommonInfo& b) {
  return a.block == b.block && a.dim == b.dim && a.domain == b.domain;
}
}  // namespace

struct FileService::Impl {
  // The files served, then the parents of files[0] its timeline reaches (added as a
  // window needs them; `served` counts the first).
  std::vector<std::string> paths;
  std::size_t served = 0;
  // Open readers, each with the stamp its file had when opened; empty until needed
  // again after a failed reopen.
  std::vector<std::optional<k::Reader>> readers;
  std::vector<Stamp> stamps;
  k::CommonInfo common;  ///< files[0]'s, which every file shares
  // The tree rows of the last step windowed that windows have visited so far (panning
  // and zooming stay on one step): a window reads only the topology rows its walk
  // visits and has not seen yet, so a cold window of a big step costs what its budget
  // does, not the step (bench/window/HISTORY.md, §1 "Cold one-shot windows").
  std::size_t cached_file = 0;
  std::optional<win::StepRows> tree;
  // Rows read for the current request, kept between requests: a fresh 1.5 MB buffer per
  // request cost more in zeroing and first-touch page faults than the read itself
  // (rewind serve, budget 1e6: 4 ms instead of 0.6 ms; docs/benchmarks.md).
  std::vector<double> grids;
  std::vector<std::uint8_t> types;

  template <class T>
  static T* scratch(std::vector<T>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
  }

  std::size_t file_index(const std::string& file) {
    if (file.empty()) return 0;
    const auto it = std::find(paths.begin(), paths.end(), file);
    if (it == paths.end()) {
      const auto line = parent_steps();  // a parent a steps_reply named
      if (std::any_of(line.begin(), line.end(), [&](const k::TimelineEntry& e) { return e.path == file; }))
        return add(file);
    }
    if (it == paths.end()) throw ServiceError(ErrorCode::bad_argument, "no file \"" + file + "\" on this server");
    return static_cast<std::size_t>(it - paths.begin());
  }

  /// The reader of file f, opened afresh if the file changed since (a writer appending
  /// steps: HDF5 1.10 without SWMR shows a reader the file as it was when opened, up to
  /// the end of the space it had then, so new steps stay invisible or unreadable).
  const k::Reader& reader(std::size_t f) {
    const Stamp now = stamp_of(paths[f]);
    if (readers[f] && now == stamps[f]) return *readers[f];
    readers[f].reset();  // first: HDF5 hands an already open file back, with its old view
    if (cached_file == f) tree.reset();
    k::Reader r = k::Reader::open(paths[f]);
    if (!same_geometry(r.common(), common))
      throw ServiceError(ErrorCode::internal, paths[f] + " now holds a run of another geometry; restart the server");
    readers[f].emplace(std::move(r));
    stamps[f] = now;
    return *readers[f];
  }

  /// op() on a settled view of file f: while it runs, no writer is in the middle of a
  /// step (kernel::StepLock, shared); a kernel::FileError raised while the file may be
  /// half written anyway (no lock on this file system, recently_modified) is retried on
  /// a fresh open; one raised on a file at rest is the file's answer.
  template <class Op>
  auto settled(std::size_t f, Op op) -> decltype(op()) {
    for (int attempt = 1;; ++attempt) {
      {
        const auto lock = k::StepLock::take(paths[f], k::StepLock::Mode::shared, kWriterWait);
        if (lock.supported() && !lock.held())
          throw ServiceError(ErrorCode::busy, paths[f] + ": a step has been being written for over " +
                                                  std::to_string(kWriterWait.count() / 1000) + " s; try again");
        try {
          return op();
        } catch (const k::FileError&) {
          if (attempt == kAttempts || !recently_modified(paths[f])) throw;
        }
      }
      readers[f].reset();
      std::this_thread::sleep_for(kRetryPause);
    }
  }

  /// file's index, opened (its geometry checked) if it is not open yet.
  std::size_t add(const std::string& file) {
    const auto it = std::find(paths.begin(), paths.end(), file);
    if (it != paths.end()) return static_cast<std::size_t>(it - paths.begin());
    paths.push_back(file);
    readers.emplace_back();
    stamps.emplace_back();
    try {
      (void)reader(paths.size() - 1);
    } catch (...) {
      paths.pop_back();
      readers.pop_back();
      stamps.pop_back();
      throw;
    }
    return paths.size() - 1;
  }

  /// The steps of files[0]'s timeline that its parents hold (kernel::timeline: each
  /// parent's up to the branch point); none for an original run or a broken lineage
  /// (the file's own steps are still served).
  std::vector<k::TimelineEntry> parent_steps() {
    if (!reader(0).common().lineage.is_branch()) return {};
    std::vector<k::TimelineEntry> out;
    try {
      for (auto& e : k::timeline(paths[0]))
        if (e.path != paths[0]) out.push_back(std::move(e));
    } catch (const k::FileError&) {
      return {};
    }
    return out;
  }

  /// A window of file f's view now (FileService::window without the retries).
  WindowReply window(std::size_t f, const WindowRequest& req, const WindowOptions& opt);

  /// The tree of `step` of file f, read with `r` (file f's reader of this attempt).
  win::StepRows& topology(std::size_t f, const k::Reader& r, const k::StepEntry& step) {
    if (!tree || f != cached_file || step.step != tree->step()) {
      tree.reset();
      tree.emplace(r, step);
      cached_file = f;
    }
    tree->rebind(r);
    return *tree;
  }
};

FileService::FileService(const std::vector<std::string>& files) : impl_(std::make_unique<Impl>()) {
  if (files.empty()) throw std::invalid_argument("file service: no files");
  for (const auto& f : files) {
    const Stamp stamp = stamp_of(f);
    impl_->readers.emplace_back(k::Reader::open(f));
    impl_->stamps.push_back(stamp);
    impl_->paths.push_back(f);
    impl_->served = impl_->paths.size();
    const auto& c = impl_->readers.back()->common();
    if (impl_->readers.size() == 1) impl_->common = c;
    if (!same_geometry(c, impl_->common))
      throw std::invalid_argument("file service: " + f + " has another geometry than " + files.front());
  }
}

FileService::~FileService() = default;

ServerInfo server_info_of(const kernel::CommonInfo& c) {
  ServerInfo i;
  for (const auto& v : c.variables) i.variables.push_back({v.name, v.unit});
  i.domain_lo = {c.domain[0], c.domain[2], c.domain[4]};
  i.domain_hi = {c.domain[1], c.domain[3], c.domain[5]};
  i.dim = c.dim;
  i.block = {c.block.sx, c.block.sy, c.block.sz};
  i.refinement = c.refinement;
  return i;
}

ServerInfo FileService::info() {
  ServerInfo i = server_info_of(impl_->common);
  i.files.assign(impl_->paths.begin(), impl_->paths.begin() + static_cast<std::ptrdiff_t>(impl_->served));
  return i;
}

std::vector<StepRecord> FileService::steps() {
  auto& s = *impl_;
  std::vector<StepRecord> out;
  for (const auto& e : s.parent_steps()) out.push_back({e.step.step, e.step.time, k::to_string(e.step.kind), e.path});
  for (std::size_t f = 0; f < s.served; ++f)
    for (const auto& e : s.settled(f, [&] { return s.reader(f).steps(true); }))
      out.push_back({e.step, e.time, k::to_string(e.kind), s.paths[f]});
  return out;
}

WindowReply FileService::window(const WindowRequest& req) { return window(req, WindowOptions{}); }

namespace {
// The variables a window of `step` sends: those asked for, or (none asked) every cell
// variable the step stores, in the file's order. A name the step does not store is
// refused with the names it does store (a visualisation step holds a chosen few), or
// skipped with `stored_only`.
std::vector<std::string> step_variables(const k::Reader& reader, std::int64_t step, const std::vector<std::string>& asked,
                                        bool stored_only) {
  std::vector<std::string> stored;
  for (const auto& v : reader.common().variables)
    for (const auto& f : reader.fields(step))
      if (f.group == "cell_data" && f.name == v.name) stored.push_back(v.name);
  if (asked.empty()) return stored;
  std::vector<std::string> out;
  for (const auto& v : asked) {
    if (std::find(stored.begin(), stored.end(), v) != stored.end()) out.push_back(v);
    else if (!stored_only)
      throw ServiceError(ErrorCode::unknown_variable,
                         fmt::format("step {} does not store \"{}\" (it stores {})", step, v, fmt::join(stored, ", ")));
  }
  return out;
}

// Each variable's {min, max} over the statistics rows of the grids shown (1.11; NaN where
// none of them has a non-solid cell or the step lacks that variable's statistics); empty
// when the step has none of them (format < 1.9, output.io.statistics = false).
std::vector<std::array<double, 2>> shown_ranges(const k::Reader& reader, std::int64_t step,
                                                const std::vector<std::string>& variables,
                                                std::vector<std::int64_t> rows) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  std::sort(rows.begin(), rows.end());  // read_statistics_rows wants them ascending, distinct
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::vector<std::array<double, 2>> out(variables.size(), {nan, nan});
  bool any = false;
  for (std::size_t v = 0; v < variables.size(); ++v) {
    if (!reader.has_statistics(step, variables[v])) continue;
    any = true;
    if (rows.empty()) continue;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& row : reader.read_statistics_rows(step, variables[v], rows))
      if (!std::isnan(row[0])) lo = std::min(lo, row[0]), hi = std::max(hi, row[1]);  // NaN: no non-solid cell
    if (lo <= hi) out[v] = {lo, hi};
  }
  if (!any) out.clear();
  return out;
}
}  // namespace

WindowReply FileService::window(const WindowRequest& req, const WindowOptions& opt) {
  if (opt.pieces < 1 || opt.piece < 0 || opt.piece >= opt.pieces)
    throw std::invalid_argument("file service: piece " + std::to_string(opt.piece) + " of " + std::to_string(opt.pieces));
  auto& s = *impl_;
  if (req.file.empty()) {
    // files[0]'s timeline, through its parents (docs/file-format.md §6, "A branch's timeline").
    auto line = s.parent_steps();
    if (!line.empty()) {
      for (const auto& e : s.settled(0, [&] { return s.reader(0).steps(true); })) line.push_back({s.paths[0], e});
      const auto sel = req.time == "live" ? std::string("latest") : req.time;
      k::TimelineEntry e;
      try {
        e = k::select_on_timeline(line, sel, s.paths[0]);
      } catch (const k::FileError& x) {
        if (x.kind() == k::ErrorKind::no_such_step) throw ServiceError(ErrorCode::no_such_step, x.what());
        throw;
      }
      WindowRequest at = req;
      at.file = e.path;
      at.time = std::to_string(e.step.step);
      const std::size_t f = s.add(e.path);
      return s.settled(f, [&] { return s.window(f, at, opt); });
    }
  }
  const std::size_t f = s.file_index(req.file);
  return s.settled(f, [&] { return s.window(f, req, opt); });
}

WindowReply FileService::Impl::window(std::size_t f, const WindowRequest& req, const WindowOptions& opt) {
  auto& s = *this;
  const auto& reader = s.reader(f);
  k::StepEntry step;
  try {
    step = reader.find_step(req.time == "live" ? "latest" : req.time);
  } catch (const k::FileError& e) {
    if (e.kind() == k::ErrorKind::no_such_step) throw ServiceError(ErrorCode::no_such_step, e.what());
    throw;
  }
  const std::vector<std::string> variables = step_variables(reader, step.step, req.variables, opt.stored_only);
  const auto& cm = reader.common();
  auto& tp = s.topology(f, reader, step);
  win::Window w;
  w.box.lo = req.lo;
  w.box.hi = req.hi;
  w.budget = static_cast<std::int64_t>(req.budget);
  w.max_level = opt.max_level;
  // Adaptive: ranked by the first variable's detail, from the step's statistics (none: uniform).
  w.lod = req.lod == "adaptive" ? win::Lod::adaptive : win::Lod::uniform;
  tp.use_detail(w.lod == win::Lod::adaptive && !variables.empty() ? variables.front() : std::string());
  auto sel = win::select(tp, w);
  if (opt.pieces > 1) {
    // This caller's contiguous share of the pieces (and of the values).
    const auto n = static_cast<std::ptrdiff_t>(sel.pieces.size());
    std::vector<win::Piece> share(sel.pieces.begin() + n * opt.piece / opt.pieces,
                                  sel.pieces.begin() + n * (opt.piece + 1) / opt.pieces);
    sel.pieces = std::move(share);
    sel.values = 0;
    for (const auto& p : sel.pieces) sel.values += p.values();
  }

  WindowReply r;
  r.step = step.step;
  r.time = step.time;
  r.file = s.paths[f];
  r.level = sel.level;
  r.stride = sel.stride;
  r.lod = sel.lod == win::Lod::adaptive ? "adaptive" : "uniform";
  r.lo = sel.covered.lo;
  r.hi = sel.covered.hi;
  r.cells = static_cast<std::uint64_t>(sel.values);
  r.variables = variables;
  for (const auto& p : sel.pieces) {
    PieceMessage& m = r.pieces.emplace_back();
    m.row = p.row;
    m.uid = tp.uid(p.row);
    win::copy_placement(p, m);
  }
  const std::vector<std::int64_t> rows = sel.rows();
  const std::vector<std::size_t> slot = sel.slots();  // a grid may give several pieces
  const std::array<int, 3> cells{cm.block.sx, cm.block.sy, cm.block.sz};
  const auto per_grid = static_cast<std::size_t>(cm.block.cells());
  double* rows_at = Impl::scratch(s.grids, rows.size() * per_grid);
  for (const auto& v : variables) {
    reader.read_rows(step.step, "cell_data", v, rows, rows_at);
    ValueArray out(r.cells);
    double* o = out.data();
    for (std::size_t i = 0; i < sel.pieces.size(); ++i)
      o = win::extract(sel.pieces[i], cells, rows_at + slot[i] * per_grid, o);
    r.values.push_back(std::move(out));
  }
  r.ranges = shown_ranges(reader, step.step, variables, rows);
  try {
    std::uint8_t* types_at = Impl::scratch(s.types, rows.size() * per_grid);
    reader.read_cell_types(step.step, rows, types_at);
    r.cell_type.resize(r.cells);
    std::uint8_t* o = r.cell_type.data();
    for (std::size_t i = 0; i < sel.pieces.size(); ++i)
      o = win::extract(sel.pieces[i], cells, types_at + slot[i] * per_grid, o);
  } catch (const k::FileError& e) {
    if (e.kind() != k::ErrorKind::missing_object) throw;
    r.cell_type.clear();  // a step without cell types: the reply says so with an empty array
  }
  return r;
}

}  // namespace rwd::collector
