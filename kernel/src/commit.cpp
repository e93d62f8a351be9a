// Phase 6 of Writer::write_step: the crash protocol (docs/file-format.md §5).
// A step is committed once its group's `committed` attribute is 1, and that attribute is
// written only after the step's data reached the file; its index row follows in a flush
// of its own. One flush is not atomic: with collective metadata writes each rank writes
// part of the metadata, and a node lost in the middle of a flush that held both the
// attribute and the index row left the index listing a step its group did not commit
// (tests/multinode/multinode_faults.sh). In this order a crash at any point leaves the
// old state, or the complete step with the index lagging behind it by that step, which
// Writer::append completes.
#include <algorithm>
#include <map>

#include "collective.hpp"
#include "write_step.hpp"

namespace rwd::kernel::detail {

void commit_step(WriterState& w, const IndexRow& row, h5::Group& step_group, std::vector<h5::Dataset>& dsets) {
  const h5::Ctx& c = w.ctx;
  phase(w.comm, w.path, [&] {
    if (w.opts.flush_on_commit) w.flush();
  });
  w.hook("flushed");
  phase(w.comm, w.path, [&] {
    h5::rewrite_attr_u8(c, step_group, "committed", 1);
    if (w.opts.flush_on_commit) w.flush();
  });
  w.hook("marked");
  phase(w.comm, w.path, [&] {
    h5::Dataset idx(c.check(H5Dopen2(w.file, fmt_names::kIndex, H5P_DEFAULT), "open index"));
    auto d = h5::dims(c, idx, "index");
    const hsize_t n = d.empty() ? 0 : d[0];
    const hsize_t n1 = n + 1;
    c.check_status(H5Dset_extent(idx, &n1), "extend index");
    h5::Dataspace fs(c.check(H5Dget_space(idx), "index space"));
    const hsize_t one = w.rank == 0 ? 1 : 0;
    h5::Dataspace ms(c.check(H5Screate_simple(1, &one, nullptr), "space"));
    if (w.rank == 0) {
      const hsize_t start = n, cnt = 1;
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &cnt, nullptr);
    } else {
      H5Sselect_none(fs);
      H5Sselect_none(ms);
    }
    h5::Datatype t = index_type(c);
    c.check_status(H5Dwrite(idx, t, ms, fs, w.dxpl_coll, &row), "append index row");
  });
  w.hook("indexed");
  phase(w.comm, w.path, [&] {
    dsets.clear();
    step_group.reset();
    if (w.opts.flush_on_commit) w.flush();
  });
}

IndexRepair plan_index_repair(const WriterState& w, const std::vector<StepEntry>& committed) {
  const h5::Ctx& c = w.ctx;
  h5::Dataset idx(c.check(H5Dopen2(w.file, fmt_names::kIndex, H5P_DEFAULT), "open index"));
  const auto d = h5::dims(c, idx, "index");
  std::vector<IndexRow> rows(d.empty() ? 0 : d[0]);
  const h5::Datatype t = index_type(c);
  if (!rows.empty()) c.check_status(H5Dread(idx, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), "read index");
  std::map<std::int64_t, const StepEntry*> by_step;
  for (const auto& e : committed) by_step[e.step] = &e;
  IndexRepair r;
  r.rows = r.keep = rows.size();
  while (r.keep > 0 && by_step.count(rows[r.keep - 1].step) == 0) --r.keep;
  std::int64_t last = -1;
  for (std::size_t i = 0; i < r.keep; ++i) last = std::max(last, rows[i].step);
  for (auto it = by_step.upper_bound(last); it != by_step.end(); ++it) {
    const StepEntry& e = *it->second;
    r.added.push_back({e.step, e.time, e.dt, static_cast<std::uint8_t>(e.kind), 1, e.n_grids, e.n_levels, e.bytes});
  }
  return r;
}

void repair_index(WriterState& w, const IndexRepair& r) {
  const h5::Ctx& c = w.ctx;
  h5::Dataset idx(c.check(H5Dopen2(w.file, fmt_names::kIndex, H5P_DEFAULT), "open index"));
  hsize_t n = r.keep + r.added.size();
  c.check_status(H5Dset_extent(idx, &n), "resize index");
  if (r.added.empty()) return;
  h5::Dataspace fs(c.check(H5Dget_space(idx), "index space"));
  hsize_t count = w.rank == 0 ? r.added.size() : 0;
  h5::Dataspace ms(c.check(H5Screate_simple(1, &count, nullptr), "space"));
  if (count > 0) {
    const hsize_t start = r.keep;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
  } else {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  const h5::Datatype t = index_type(c);
  c.check_status(H5Dwrite(idx, t, ms, fs, w.dxpl_coll, r.added.data()), "complete index");
}

}  // namespace rwd::kernel::detail
