// Offline windows: kernel::Reader + window::select + read_rows of the selected rows
// only + window::extract (see file_service.hpp).
#include "rewind/collector/file_service.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/window/kernel_view.hpp"
#include "rewind/window/select.hpp"

namespace rwd::collector {

namespace k = rwd::kernel;
namespace win = rwd::window;

struct FileService::Impl {
  std::vector<std::string> paths;
  std::vector<k::Reader> readers;
  // The topology of the last step windowed (panning and zooming stay on one step).
  std::size_t cached_file = 0;
  std::int64_t cached_step = -1;
  k::StepTopology topo;
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

  std::size_t file_index(const std::string& file) const {
    if (file.empty()) return 0;
    const auto it = std::find(paths.begin(), paths.end(), file);
    if (it == paths.end()) throw ServiceError(ErrorCode::bad_argument, "no file \"" + file + "\" on this server");
    return static_cast<std::size_t>(it - paths.begin());
  }

  const k::StepTopology& topology(std::size_t f, std::int64_t step) {
    if (f != cached_file || step != cached_step) {
      cached_step = -1;
      topo = readers[f].read_topology(step);
      cached_file = f;
      cached_step = step;
    }
    return topo;
  }
};

FileService::FileService(const std::vector<std::string>& files) : impl_(std::make_unique<Impl>()) {
  if (files.empty()) throw std::invalid_argument("file service: no files");
  for (const auto& f : files) {
    impl_->readers.push_back(k::Reader::open(f));
    impl_->paths.push_back(f);
    const auto& c0 = impl_->readers.front().common();
    const auto& c = impl_->readers.back().common();
    if (c.block != c0.block || c.dim != c0.dim || c.domain != c0.domain)
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
  ServerInfo i = server_info_of(impl_->readers.front().common());
  i.files = impl_->paths;
  return i;
}

std::vector<StepRecord> FileService::steps() {
  std::vector<StepRecord> out;
  for (std::size_t f = 0; f < impl_->readers.size(); ++f)
    for (const auto& s : impl_->readers[f].steps(true)) out.push_back({s.step, s.time, k::to_string(s.kind), impl_->paths[f]});
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
}  // namespace

WindowReply FileService::window(const WindowRequest& req, const WindowOptions& opt) {
  if (opt.pieces < 1 || opt.piece < 0 || opt.piece >= opt.pieces)
    throw std::invalid_argument("file service: piece " + std::to_string(opt.piece) + " of " + std::to_string(opt.pieces));
  auto& s = *impl_;
  const std::size_t f = s.file_index(req.file);
  const auto& reader = s.readers[f];
  k::StepEntry step;
  try {
    step = reader.find_step(req.time == "live" ? "latest" : req.time);
  } catch (const k::FileError& e) {
    if (e.kind() == k::ErrorKind::no_such_step) throw ServiceError(ErrorCode::no_such_step, e.what());
    throw;
  }
  const std::vector<std::string> variables = step_variables(reader, step.step, req.variables, opt.stored_only);
  const auto& common = reader.common();
  const auto& topo = s.topology(f, step.step);
  win::Window w;
  w.box.lo = req.lo;
  w.box.hi = req.hi;
  w.budget = static_cast<std::int64_t>(req.budget);
  w.max_level = opt.max_level;
  auto sel = win::select(win::view_of(topo, common.block), w);
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
  r.lo = sel.covered.lo;
  r.hi = sel.covered.hi;
  r.cells = static_cast<std::uint64_t>(sel.values);
  r.variables = variables;
  for (const auto& p : sel.pieces)
    r.pieces.push_back({p.row, topo.uid[static_cast<std::size_t>(p.row)], p.level, p.first, p.count, p.stride, p.origin, p.spacing});
  const std::vector<std::int64_t> rows = sel.rows();
  const std::array<int, 3> cells{common.block.sx, common.block.sy, common.block.sz};
  const auto per_grid = static_cast<std::size_t>(common.block.cells());
  double* grids = Impl::scratch(s.grids, rows.size() * per_grid);
  for (const auto& v : variables) {
    reader.read_rows(step.step, "cell_data", v, rows, grids);
    std::vector<double> out(r.cells);
    double* o = out.data();
    for (std::size_t i = 0; i < sel.pieces.size(); ++i) o = win::extract(sel.pieces[i], cells, grids + i * per_grid, o);
    r.values.push_back(std::move(out));
  }
  try {
    std::uint8_t* types = Impl::scratch(s.types, rows.size() * per_grid);
    reader.read_cell_types(step.step, rows, types);
    r.cell_type.resize(r.cells);
    std::uint8_t* o = r.cell_type.data();
    for (std::size_t i = 0; i < sel.pieces.size(); ++i) o = win::extract(sel.pieces[i], cells, types + i * per_grid, o);
  } catch (const k::FileError& e) {
    if (e.kind() != k::ErrorKind::missing_object) throw;
    r.cell_type.clear();  // a step without cell types: the reply says so with an empty array
  }
  return r;
}

}  // namespace rwd::collector
