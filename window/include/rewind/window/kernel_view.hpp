// TreeView of a kernel::StepTopology (a step read from a Rewind file), and StepRows, a
// step's tree read as a window's walk reaches it. Header-only and kept apart from
// select.hpp so the selection core does not depend on the kernel (or MPI).
//
//   const auto topo = reader.read_topology(step);
//   const auto sel = rwd::window::select(rwd::window::view_of(topo, reader.common().block), w);
//   reader.read_rows(step, "cell_data", name, sel.rows(), buf.data());   // then extract()
//
// or, reading only the topology rows the walk visits (a cold window of a big step):
//
//   rwd::window::StepRows tree(reader, step);
//   const auto sel = rwd::window::select(tree, w);
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

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

/// The tree of one step of a file, read row by row as select(RowSource&, ...) asks
/// (kernel::Reader::read_topology_rows: checked against the rows' checksums). Rows once
/// read stay: later windows of the same step read only rows not seen yet. Borrows the
/// reader (rebind() after reopening it). load() throws kernel::FileError.
class StepRows final : public RowSource {
 public:
  StepRows(const kernel::Reader& reader, const kernel::StepEntry& step)
      : reader_(&reader), step_(step.step), n_(step.n_grids) {
    const auto& b = reader.common().block;
    cells_ = {b.sx, b.sy, b.sz};
    max_children_ = reader.common().max_children;
  }
  void rebind(const kernel::Reader& reader) { reader_ = &reader; }
  /// Adaptive windows rank grids by the detail of `var` (its per-grid statistics, format
  /// 1.9) and its octants by their shares (format 1.10), read with the rows the walk
  /// visits; "" or a step without them: no details (an adaptive window then answers with
  /// the uniform rule), or no shares (with whole grids).
  void use_detail(const std::string& var) {
    if (var == detail_var_) return;
    detail_var_ = var;
    detail_.clear();
    shares_.clear();
    has_detail_ = !var.empty() && reader_->has_statistics(step_, var);
    has_shares_ = has_detail_ && reader_->has_shares(step_, var);
  }
  [[nodiscard]] std::int64_t step() const { return step_; }
  /// Rows read so far (a window's cost).
  [[nodiscard]] std::size_t rows_read() const { return at_.size(); }

  [[nodiscard]] std::array<int, 3> cells() const override { return cells_; }
  [[nodiscard]] int max_children() const override { return max_children_; }
  [[nodiscard]] std::int64_t rows() const override { return n_; }
  void load(const std::vector<std::int64_t>& rows) override {
    if (has_detail_) {
      std::vector<std::int64_t> need;
      for (const auto r : rows)
        if (detail_.find(r) == detail_.end()) need.push_back(r);
      if (!need.empty()) {
        const auto st = reader_->read_statistics_rows(step_, detail_var_, need);
        for (std::size_t i = 0; i < need.size(); ++i) detail_.emplace(need[i], st[i][2]);
        if (has_shares_) {
          const auto sh = reader_->read_shares_rows(step_, detail_var_, need);
          const auto nc = static_cast<std::size_t>(max_children_);
          for (std::size_t i = 0; i < need.size(); ++i)
            shares_.emplace(need[i], std::vector<double>(sh.begin() + static_cast<std::ptrdiff_t>(i * nc),
                                                         sh.begin() + static_cast<std::ptrdiff_t>((i + 1) * nc)));
        }
      }
    }
    std::vector<std::int64_t> missing;
    for (const auto r : rows)
      if (at_.find(r) == at_.end()) missing.push_back(r);
    if (missing.empty()) return;
    kernel::TopologyRows t = reader_->read_topology_rows(step_, missing);
    for (std::size_t i = 0; i < missing.size(); ++i) {
      at_.emplace(missing[i], uid_.size());
      uid_.push_back(t.uid[i]);
      level_.push_back(t.level[i]);
      bbox_.push_back(t.bbox[i]);
    }
    child_rows_.insert(child_rows_.end(), t.child_rows.begin(), t.child_rows.end());
  }
  [[nodiscard]] int level(std::int64_t row) const override { return level_[index(row)]; }
  [[nodiscard]] const std::array<double, 6>& bbox(std::int64_t row) const override { return bbox_[index(row)]; }
  [[nodiscard]] std::int64_t child(std::int64_t row, int slot) const override {
    return child_rows_[index(row) * static_cast<std::size_t>(max_children_) + static_cast<std::size_t>(slot)];
  }
  [[nodiscard]] bool has_detail() const override { return has_detail_; }
  [[nodiscard]] double detail(std::int64_t row) const override { return detail_.at(row); }
  [[nodiscard]] bool has_shares() const override { return has_shares_; }
  [[nodiscard]] double share(std::int64_t row, int o) const override {
    return shares_.at(row).at(static_cast<std::size_t>(o));
  }
  /// The uid of a loaded row.
  [[nodiscard]] std::uint64_t uid(std::int64_t row) const { return uid_[index(row)]; }

 private:
  [[nodiscard]] std::size_t index(std::int64_t row) const { return at_.at(row); }  // std::out_of_range: not loaded

  const kernel::Reader* reader_;
  std::int64_t step_, n_;
  std::array<int, 3> cells_{};
  int max_children_ = 0;
  std::unordered_map<std::int64_t, std::size_t> at_;  ///< row -> index into the arrays below
  std::vector<std::uint64_t> uid_;
  std::vector<std::int32_t> level_;
  std::vector<kernel::BoxRow> bbox_;
  std::vector<std::int64_t> child_rows_;
  std::string detail_var_;
  bool has_detail_ = false;
  std::unordered_map<std::int64_t, double> detail_;  ///< row -> detail of detail_var_
  bool has_shares_ = false;
  std::unordered_map<std::int64_t, std::vector<double>> shares_;  ///< row -> its octants' shares
};

}  // namespace rwd::window
