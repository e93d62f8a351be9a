// TreeView of a kernel::StepTopology (a step read from a Rewind file). Header-only and kept
// apart from select.hpp so the selection core does not depend on the kernel (or MPI).
//
//   const auto topo = reader.read_topology(step);
//   const auto sel = rwd::window::select(rwd::window::view_of(topo, reader.common().block), w);
//   reader.read_rows(step, "cell_data", name, sel.rows(), buf.data());   // then extract()
#pragma once
#include "rewind/kernel/reader.hpp"
#include "rewind/window/select.hpp"

namespace rwd::window {

/// Borrows the arrays of `topo` (it must outlive the view); `block` is the file's
/// CommonInfo::block. Pure, does not throw (select() checks the view).
inline TreeView view_of(const kernel::StepTopology& topo, const kernel::BlockShape& block) {
  TreeView v;
  v.cells = {block.sx, block.sy, block.sz};
  v.max_children = topo.max_children;
  v.level = topo.level;
  v.bbox = topo.bbox;
  v.child_rows = topo.child_rows;
  return v;
}

}  // namespace rwd::window
