// Phase 6 of Writer::write_step: the crash protocol (docs/file-format.md §5).
// A step is visible to readers only once its index row says committed, and that row is
// written only after the step's data reached the file: a crash at any point leaves
// either the old index or the complete step.
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
  w.hook("marked");
  phase(w.comm, w.path, [&] {
    dsets.clear();
    step_group.reset();
    if (w.opts.flush_on_commit) w.flush();
  });
}

}  // namespace rwd::kernel::detail
