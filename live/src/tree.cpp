// Gathering the run's tree on compute rank 0 (tree.hpp).
#include "rewind/live/tree.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "format.hpp"
#include "rewind/window/kernel_view.hpp"

namespace rwd::live {

namespace k = rwd::kernel;

namespace {

// One grid's record as it travels: uid, level, sort key, parent, box, children.
struct Flat {
  std::vector<std::uint64_t> u;  // uid, sort_key, parent, n_children, children...
  std::vector<std::int32_t> level;
  std::vector<double> box;
};

Flat flatten(const k::LocalGrids& grids) {
  Flat f;
  for (const auto& g : grids.grids) {
    f.u.insert(f.u.end(), {g.uid, g.sort_key, g.parent_uid, static_cast<std::uint64_t>(g.child_uids.size())});
    f.u.insert(f.u.end(), g.child_uids.begin(), g.child_uids.end());
    f.level.push_back(g.level);
    f.box.insert(f.box.end(), g.bbox.begin(), g.bbox.end());
  }
  return f;
}

/// Every rank's `mine` on rank 0, rank after rank, and how many each sent.
template <class T>
std::pair<std::vector<T>, std::vector<int>> gatherv(MPI_Comm compute, const std::vector<T>& mine, MPI_Datatype type) {
  int rank = 0, size = 1;
  MPI_Comm_rank(compute, &rank);
  MPI_Comm_size(compute, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, compute);
  int total = 0;
  for (int q = 0; q < size; ++q) displ[static_cast<std::size_t>(q)] = total, total += counts[static_cast<std::size_t>(q)];
  std::vector<T> all(rank == 0 ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(mine.data(), n, type, all.data(), counts.data(), displ.data(), type, 0, compute);
  return {std::move(all), std::move(counts)};
}

/// Every rank's records, gathered on rank 0.
struct Gathered {
  std::vector<std::uint64_t> u;
  std::vector<std::int32_t> level;
  std::vector<int> level_counts;
  std::vector<double> box;
};

// A record unpacked: (rank, record) for each grid.
struct Rec {
  std::uint64_t uid, key, parent;
  std::int32_t level, owner;
  std::size_t child_at, children, box_at;
};

/// The records rank by rank, sorted as a file's step has its rows: level, writer rank,
/// sort key.
std::vector<Rec> unpack(const Gathered& g) {
  std::vector<Rec> recs;
  std::size_t at = 0, li = 0;
  for (std::size_t q = 0; q < g.level_counts.size(); ++q)
    for (int n = 0; n < g.level_counts[q]; ++n, ++li) {
      Rec r{g.u[at], g.u[at + 1], g.u[at + 2], g.level[li], static_cast<std::int32_t>(q), at + 4,
            static_cast<std::size_t>(g.u[at + 3]), 6 * li};
      at += 4 + r.children;
      recs.push_back(r);
    }
  std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
    return std::tie(a.level, a.owner, a.key) < std::tie(b.level, b.owner, b.key);
  });
  return recs;
}

/// The snapshot of the sorted records; `problem` names the first inconsistency.
TreeSnapshot build(const std::vector<Rec>& recs, const Gathered& g, const k::BlockShape& block, std::string& problem) {
  TreeSnapshot t;
  t.block = block;
  auto& topo = t.topo;
  const std::size_t n = recs.size();
  std::size_t mc = 0;
  for (const auto& r : recs) mc = std::max(mc, r.children);
  topo.n_grids = static_cast<std::int64_t>(n);
  topo.max_children = static_cast<int>(mc);
  std::unordered_map<std::uint64_t, std::int64_t> row;
  for (std::size_t i = 0; i < n; ++i) row[recs[i].uid] = static_cast<std::int64_t>(i);
  topo.child_uids.assign(n * mc, k::kNoUid);
  topo.child_rows.assign(n * mc, -1);
  int roots = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = recs[i];
    topo.uid.push_back(r.uid);
    topo.sort_key.push_back(r.key);
    topo.level.push_back(r.level);
    topo.rank.push_back(r.owner);
    topo.parent_uid.push_back(r.parent);
    const auto p = row.find(r.parent);
    topo.parent_row.push_back(p == row.end() ? -1 : p->second);
    if (r.level == 0) ++roots;
    k::BoxRow b{};
    std::copy_n(g.box.begin() + static_cast<std::ptrdiff_t>(r.box_at), 6, b.begin());
    topo.bbox.push_back(b);
    for (std::size_t c = 0; c < r.children; ++c) {
      const auto cu = g.u[r.child_at + c];
      const auto cr = row.find(cu);
      if (cr == row.end() && problem.empty())
        problem = fmt::format("live tree: grid {} names a child {} that no compute rank describes", r.uid, cu);
      topo.child_uids[i * mc + c] = cu;
      topo.child_rows[i * mc + c] = cr == row.end() ? -1 : cr->second;
    }
    t.owner.push_back(r.owner);
  }
  if (roots != 1 && problem.empty()) problem = fmt::format("live tree: {} grids on level 0, one root expected", roots);
  if (n > 0 && recs.front().level != 0 && problem.empty()) problem = "live tree: no root grid";
  const int levels = n == 0 ? 0 : recs.back().level + 1;
  topo.level_offsets.assign(static_cast<std::size_t>(levels) + 1, static_cast<std::int64_t>(n));
  for (int l = 0; l < levels; ++l)  // the first row on level l or deeper (rows are level-major)
    topo.level_offsets[static_cast<std::size_t>(l)] = std::lower_bound(recs.begin(), recs.end(), l,
      [](const Rec& r, int lv) { return r.level < lv; }) - recs.begin();
  return t;
}

/// Rank 0's `problem`, if any, thrown on every rank (std::invalid_argument).
void throw_on_all(MPI_Comm compute, std::string problem) {
  int bad = problem.empty() ? 0 : 1;
  MPI_Bcast(&bad, 1, MPI_INT, 0, compute);
  if (!bad) return;
  int len = static_cast<int>(problem.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, compute);
  problem.resize(static_cast<std::size_t>(len));
  MPI_Bcast(problem.data(), len, MPI_CHAR, 0, compute);
  throw std::invalid_argument(problem);
}

}  // namespace

std::optional<TreeSnapshot> gather_tree(MPI_Comm compute, const k::LocalGrids& grids) {
  int rank = 0;
  MPI_Comm_rank(compute, &rank);
  const Flat f = flatten(grids);
  Gathered g;
  g.u = gatherv(compute, f.u, MPI_UINT64_T).first;
  std::tie(g.level, g.level_counts) = gatherv(compute, f.level, MPI_INT32_T);
  g.box = gatherv(compute, f.box, MPI_DOUBLE).first;
  std::string problem;
  std::optional<TreeSnapshot> out;
  if (rank == 0) out = build(unpack(g), g, grids.block, problem);
  throw_on_all(compute, problem);
  return out;
}

Selection select(const TreeSnapshot& tree, const window::Window& w, std::span<const double> detail,
                 std::span<const double> shares) {
  auto view = window::view_of(tree.topo, tree.block);
  view.detail = detail;
  view.shares = shares;
  const auto sel = window::select(view, w);
  Selection out;
  out.level = sel.level;
  out.lod = sel.lod;
  out.stride = sel.stride;
  out.covered = sel.covered;
  out.pieces.reserve(sel.pieces.size());
  // In row order, as a file's window: rows are (level, rank, key), so a rank's pieces of
  // a level are one run (one message per variable).
  for (const auto& p : sel.pieces) {
    const auto row = static_cast<std::size_t>(p.row);
    out.pieces.push_back({tree.topo.uid[row], tree.owner[row], p});
  }
  return out;
}

std::vector<std::byte> encode(const TreeSnapshot& t) {
  const auto& f = detail::frame_format();
  wire::ByteWriter w(detail::kWho);
  wire::begin_frame(w, f, kTreeType, 0);
  w.put_string(t.file);
  w.put(t.block.sx);
  w.put(t.block.sy);
  w.put(t.block.sz);
  const auto n = static_cast<std::size_t>(t.topo.n_grids);
  w.put_count(n);
  w.put(static_cast<std::uint32_t>(t.topo.max_children));
  for (std::size_t i = 0; i < n; ++i) {
    w.put(t.topo.uid[i]);
    w.put(t.topo.sort_key[i]);
    w.put(t.topo.level[i]);
    w.put(t.owner[i]);
    w.put(t.topo.parent_uid[i]);
    for (const double b : t.topo.bbox[i]) w.put_f64(b);
    for (std::size_t c = 0; c < static_cast<std::size_t>(t.topo.max_children); ++c)
      w.put(t.topo.child_uids[i * static_cast<std::size_t>(t.topo.max_children) + c]);
  }
  wire::end_frame(w, f);
  return std::move(w.out);
}

TreeSnapshot decode_tree(std::span<const std::byte> frame) {
  const auto& f = detail::frame_format();
  const auto h = wire::check_frame(f, frame);
  if (h.type != kTreeType) wire::fail(wire::Fault::malformed, detail::kWho, "not a tree frame");
  wire::ByteReader r(frame.subspan(wire::kHeaderSize), detail::kWho);
  TreeSnapshot t;
  t.file = r.get_string();
  t.block.sx = r.get<int>();
  t.block.sy = r.get<int>();
  t.block.sz = r.get<int>();
  const std::size_t n = r.get_count(8 + 8 + 4 + 4 + 8 + 48);
  const auto mc = r.get<std::uint32_t>();
  if (mc > 64) wire::fail(wire::Fault::malformed, detail::kWho, "more than 64 children per grid");
  auto& topo = t.topo;
  topo.n_grids = static_cast<std::int64_t>(n);
  topo.max_children = static_cast<int>(mc);
  std::unordered_map<std::uint64_t, std::int64_t> row;
  for (std::size_t i = 0; i < n; ++i) {
    topo.uid.push_back(r.get<std::uint64_t>());
    topo.sort_key.push_back(r.get<std::uint64_t>());
    topo.level.push_back(r.get<std::int32_t>());
    t.owner.push_back(r.get<std::int32_t>());
    topo.parent_uid.push_back(r.get<std::uint64_t>());
    k::BoxRow b{};
    for (auto& x : b) x = r.get_f64();
    topo.bbox.push_back(b);
    for (std::uint32_t c = 0; c < mc; ++c) topo.child_uids.push_back(r.get<std::uint64_t>());
    if (i > 0 && topo.level[i] < topo.level[i - 1]) wire::fail(wire::Fault::malformed, detail::kWho, "rows not level-major");
    row[topo.uid.back()] = static_cast<std::int64_t>(i);
  }
  r.finish();
  for (std::size_t i = 0; i < n; ++i) {
    const auto p = row.find(topo.parent_uid[i]);
    topo.parent_row.push_back(p == row.end() ? -1 : p->second);
  }
  topo.child_rows.resize(topo.child_uids.size(), -1);
  for (std::size_t i = 0; i < topo.child_uids.size(); ++i)
    if (const auto c = row.find(topo.child_uids[i]); c != row.end()) topo.child_rows[i] = c->second;
  const int levels = n == 0 ? 0 : topo.level.back() + 1;
  topo.level_offsets.assign(static_cast<std::size_t>(levels) + 1, static_cast<std::int64_t>(n));
  for (int l = 0; l < levels; ++l)
    topo.level_offsets[static_cast<std::size_t>(l)] = std::lower_bound(topo.level.begin(), topo.level.end(), l) - topo.level.begin();
  return t;
}

void TreeStore::put(std::shared_ptr<const TreeSnapshot> t) {
  std::erase_if(trees_, [&](const auto& x) { return x->file == t->file; });
  constexpr std::size_t kKeep = 64;  // futures a job has forked; older trees give way
  if (trees_.size() >= kKeep) trees_.erase(trees_.begin());
  trees_.push_back(std::move(t));
}

std::shared_ptr<const TreeSnapshot> TreeStore::get(const std::string& file) const {
  if (trees_.empty()) return nullptr;
  if (!file.empty())
    for (const auto& t : trees_)
      if (t->file == file) return t;
  return trees_.back();
}

}  // namespace rwd::live
