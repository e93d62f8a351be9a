// Sliding-window selection: one breadth-first walk from the root, level by level, that
// stops at the first level whose candidate cells overflow the budget. Definitions are
// in the header; this file keeps to them literally so the brute-force test can check it.
#include "rewind/window/select.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <queue>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace rwd::window {
namespace {

constexpr double kRelTol = 1e-9;
const char* const kAxis[3] = {"x", "y", "z"};

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("rwd::window: " + what); }

/// The query in the form the per-grid test wants: tolerances, slices, domain hi.
struct Query {
  std::array<double, 3> lo{}, hi{}, tol{}, dom_hi{}, slice_at{};
  std::array<bool, 3> slice{};
  std::array<int, 3> cells{};
};

/// Cells [first, end) of one grid meeting the box, per axis.
struct Range {
  std::array<int, 3> first{}, end{};
  [[nodiscard]] bool empty() const {
    return end[0] <= first[0] || end[1] <= first[1] || end[2] <= first[2];
  }
  [[nodiscard]] std::int64_t cells() const {
    return empty() ? 0 : std::int64_t{end[0] - first[0]} * (end[1] - first[1]) * (end[2] - first[2]);
  }
};

struct Hit {
  std::int64_t row;
  Range range;
};

/// The walk's access to a tree: a TreeView's arrays as they are.
struct SpanTree {
  static constexpr bool lazy = false;
  const TreeView& t;
  [[nodiscard]] std::array<int, 3> cells() const { return t.cells; }
  [[nodiscard]] int max_children() const { return t.max_children; }
  [[nodiscard]] std::int64_t rows() const { return t.rows(); }
  void load(const std::vector<std::int64_t>&) const {}
  [[nodiscard]] int level(std::int64_t r) const { return t.level[static_cast<std::size_t>(r)]; }
  [[nodiscard]] const std::array<double, 6>& bbox(std::int64_t r) const { return t.bbox[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::int64_t child(std::int64_t r, int c) const {
    return t.child_rows[static_cast<std::size_t>(r * t.max_children + c)];
  }
  [[nodiscard]] bool has_detail() const { return !t.detail.empty(); }
  [[nodiscard]] double detail(std::int64_t r) const { return t.detail[static_cast<std::size_t>(r)]; }
};

/// The same over a RowSource, whose rows the walk loads before it looks at them.
struct LazyTree {
  static constexpr bool lazy = true;
  RowSource& s;
  [[nodiscard]] std::array<int, 3> cells() const { return s.cells(); }
  [[nodiscard]] int max_children() const { return s.max_children(); }
  [[nodiscard]] std::int64_t rows() const { return s.rows(); }
  void load(const std::vector<std::int64_t>& rows) const { s.load(rows); }
  [[nodiscard]] int level(std::int64_t r) const { return s.level(r); }
  [[nodiscard]] const std::array<double, 6>& bbox(std::int64_t r) const { return s.bbox(r); }
  [[nodiscard]] std::int64_t child(std::int64_t r, int c) const { return s.child(r, c); }
  [[nodiscard]] bool has_detail() const { return s.has_detail(); }
  [[nodiscard]] double detail(std::int64_t r) const { return s.detail(r); }
};

void validate_arrays(const TreeView& t) {
  const auto n = t.level.size();
  if (n == 0) fail("the tree view has no rows");
  if (t.bbox.size() != n) fail("the tree view has " + std::to_string(t.bbox.size()) + " bboxes for " +
                               std::to_string(n) + " rows");
  if (t.max_children < 0 || t.child_rows.size() != n * static_cast<std::size_t>(t.max_children))
    fail("the tree view's child_rows must hold rows * max_children entries");
  if (!t.detail.empty() && t.detail.size() != n)
    fail("the tree view has " + std::to_string(t.detail.size()) + " details for " + std::to_string(n) + " rows");
}

/// Checks what the walk relies on; loads the root and the last row (the deepest level).
template <class Tree>
void validate(const Tree& t) {
  if constexpr (Tree::lazy) {
    if (t.rows() < 1) fail("the tree has no rows");
    if (t.max_children() < 0) fail("the tree's max_children must be >= 0");
    t.load(t.rows() == 1 ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, t.rows() - 1});
  } else {
    validate_arrays(t.t);
  }
  for (int a = 0; a < 3; ++a) {
    if (t.cells()[a] < 1) fail(std::string("cells per grid on ") + kAxis[a] + " must be >= 1");
    const auto& root = t.bbox(0);
    if (!(root[2 * a + 1] > root[2 * a]) || !std::isfinite(root[2 * a]) || !std::isfinite(root[2 * a + 1]))
      fail(std::string("the root grid has no positive finite extent on ") + kAxis[a]);
  }
  if (t.level(0) != 0) fail("row 0 must be the root (level 0)");
}

template <class Tree>
Query make_query(const Tree& t, const Window& w) {
  validate(t);
  Query q;
  for (int a = 0; a < 3; ++a) {
    const double lo = w.box.lo[a], hi = w.box.hi[a];
    if (!std::isfinite(lo) || !std::isfinite(hi))
      fail(std::string("the box has a NaN or infinite bound on ") + kAxis[a]);
    if (lo > hi)
      fail(std::string("the box has lo > hi on ") + kAxis[a] + " (" + std::to_string(lo) + " > " +
           std::to_string(hi) + ")");
    const auto& root = t.bbox(0);
    q.lo[a] = lo;
    q.hi[a] = hi;
    q.tol[a] = kRelTol * (root[2 * a + 1] - root[2 * a]);
    q.dom_hi[a] = root[2 * a + 1];
    q.slice[a] = hi - lo <= 2 * q.tol[a];
    q.slice_at[a] = 0.5 * (lo + hi);
  }
  if (w.budget < 0) fail("the budget must be >= 0 (0 = unlimited), got " + std::to_string(w.budget));
  if (w.max_level < -1) fail("max_level must be >= -1 (-1 = no cap), got " + std::to_string(w.max_level));
  q.cells = t.cells();
  return q;
}

/// Index arithmetic equivalent to the header's per-cell "meets" predicate.
Range cells_in_box(const std::array<double, 6>& g, const Query& q) {
  Range r;
  for (int a = 0; a < 3; ++a) {
    const int s = q.cells[a];
    const double g0 = g[2 * a], g1 = g[2 * a + 1], h = (g1 - g0) / s, tol = q.tol[a];
    double first = 0, end = 0;
    if (q.slice[a]) {
      const double p = q.slice_at[a];
      first = std::floor((p + tol - g0) / h);
      const bool closing = std::abs(g1 - q.dom_hi[a]) <= tol && std::abs(p - q.dom_hi[a]) <= tol;
      if (closing && first >= s - 1) first = s - 1;
      end = first + 1;
    } else {
      first = std::floor((q.lo[a] + tol - g0) / h);
      end = std::ceil((q.hi[a] - tol - g0) / h);
    }
    r.first[a] = static_cast<int>(std::clamp(first, 0.0, static_cast<double>(s)));
    r.end[a] = static_cast<int>(std::clamp(end, 0.0, static_cast<double>(s)));
    if (r.end[a] <= r.first[a]) return Range{};
  }
  return r;
}

template <class Tree>
bool is_leaf(const Tree& t, std::int64_t row) {
  for (int c = 0; c < t.max_children(); ++c)
    if (t.child(row, c) >= 0) return false;
  return true;
}

template <class Tree>
Piece make_piece(const Tree& t, std::int64_t row, const std::array<int, 3>& first, const std::array<int, 3>& count,
                 int stride) {
  Piece p;
  p.row = row;
  p.level = t.level(row);
  p.first = first;
  p.count = count;
  p.stride = stride;
  const auto& g = t.bbox(row);
  for (int a = 0; a < 3; ++a) {
    p.cell[a] = (g[2 * a + 1] - g[2 * a]) / t.cells()[a];
    p.origin[a] = g[2 * a] + first[a] * p.cell[a];
    p.spacing[a] = p.cell[a] * stride;
  }
  return p;
}

/// Level 0 overflowed: the smallest stride k >= 2 on the root's cell-0 lattice that fits.
template <class Tree>
Piece strided_root(const Tree& t, const Range& r, std::int64_t budget) {
  for (int k = 2;; ++k) {
    std::array<int, 3> first{}, count{};
    std::int64_t values = 1;
    for (int a = 0; a < 3; ++a) {
      const int f = (r.first[a] + k - 1) / k * k;  // first lattice cell >= range start
      const int n = f < r.end[a] ? (r.end[a] - 1 - f) / k + 1 : 0;
      first[a] = n > 0 ? f : r.first[a];
      count[a] = std::max(n, 1);
      values *= count[a];
    }
    if (values <= budget) return make_piece(t, 0, first, count, k);
  }
}

void finish(Selection& sel) {
  std::sort(sel.pieces.begin(), sel.pieces.end(), [](const Piece& a, const Piece& b) { return a.row < b.row; });
  for (const auto& p : sel.pieces) {
    sel.values += p.values();
    if (!sel.runs.empty() && sel.runs.back().first_row + sel.runs.back().count == p.row)
      ++sel.runs.back().count;
    else
      sel.runs.push_back({p.row, 1});
    for (int a = 0; a < 3; ++a) {
      const double lo = p.origin[a], hi = p.origin[a] + (p.count[a] - 1) * p.spacing[a] + p.cell[a];
      const bool first = &p == &sel.pieces.front();
      sel.covered.lo[a] = first ? lo : std::min(sel.covered.lo[a], lo);
      sel.covered.hi[a] = first ? hi : std::max(sel.covered.hi[a], hi);
    }
  }
}

}  // namespace

std::vector<std::int64_t> Selection::rows() const {
  std::vector<std::int64_t> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) out.push_back(p.row);
  return out;
}

namespace {
/// The children of `frontier`'s grids (in range), ascending: what a lazy tree loads
/// before the walk looks at a level.
template <class Tree>
std::vector<std::int64_t> children_of(const Tree& tree, const std::vector<Hit>& frontier) {
  std::vector<std::int64_t> out;
  for (const auto& h : frontier)
    for (int c = 0; c < tree.max_children(); ++c)
      if (const std::int64_t child = tree.child(h.row, c); child >= 0 && child < tree.rows()) out.push_back(child);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The children of `row` that meet the box, checked to be on the next level.
template <class Tree>
std::vector<Hit> children_in_box(const Tree& tree, const Query& q, std::int64_t row, Selection& sel) {
  std::vector<Hit> out;
  for (int c = 0; c < tree.max_children(); ++c) {
    const std::int64_t child = tree.child(row, c);
    if (child < 0) continue;
    if (child >= tree.rows() || tree.level(child) != tree.level(row) + 1)
      fail("row " + std::to_string(row) + " names child row " + std::to_string(child) +
           ", which is out of range or not on the next level");
    ++sel.visited;
    if (const Range r = cells_in_box(tree.bbox(child), q); !r.empty()) out.push_back({child, r});
  }
  return out;
}

/// A grid the adaptive walk may refine: its gain (header, "Gain") and where it lies.
struct Candidate {
  double gain;
  Hit hit;
  /// Heap order: the largest gain on top, ties to the smaller row.
  bool operator<(const Candidate& o) const { return gain != o.gain ? gain < o.gain : hit.row > o.hit.row; }
};

template <class Tree>
double gain_of(const Tree& tree, std::int64_t row) {
  const double d = tree.detail(row);
  if (!(d >= 0) || !std::isfinite(d))
    fail("the detail of row " + std::to_string(row) + " is negative or not finite (" + std::to_string(d) + ")");
  const auto& g = tree.bbox(row);
  const auto s = tree.cells();
  int children = 0;
  for (int c = 0; c < tree.max_children(); ++c) children += tree.child(row, c) >= 0;
  const double cell = ((g[1] - g[0]) / s[0]) * ((g[3] - g[2]) / s[1]) * ((g[5] - g[4]) / s[2]);
  return d * d * (cell / children);
}

/// What one greedy walk returns: its grids and the total gain of the grids refined.
struct Walk {
  std::vector<Hit> hits;
  double gain = 0;
};

/// One greedy walk of the adaptive rule (header, "Walks") from `hits`, whose refined
/// ancestors gained `gain`.
template <class Tree>
Walk refine(const Tree& tree, const Query& q, const Window& w, int cap, const std::vector<Hit>& hits, double gain,
            Selection& sel) {
  std::int64_t values = 0;
  Walk out{{}, gain};
  std::priority_queue<Candidate> heap;
  const auto offer = [&](const Hit& h) {
    values += h.range.cells();
    if (tree.level(h.row) < cap && !is_leaf(tree, h.row))
      heap.push({gain_of(tree, h.row), h});
    else
      out.hits.push_back(h);
  };
  for (const auto& h : hits) offer(h);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    const Hit& h = top.hit;
    heap.pop();
    if constexpr (Tree::lazy) tree.load(children_of(tree, std::vector<Hit>{h}));
    const auto kids = children_in_box(tree, q, h.row, sel);
    std::int64_t more = -h.range.cells();
    for (const auto& k : kids) more += k.range.cells();
    if (w.budget > 0 && values + more > w.budget) {
      out.hits.push_back(h);
      continue;
    }
    out.gain += top.gain;
    values -= h.range.cells();
    for (const auto& k : kids) offer(k);
  }
  return out;
}

template <class Tree>
Selection select_in(const Tree& tree, const Window& w) {
  const Query q = make_query(tree, w);
  const std::int64_t n = tree.rows();
  const int deepest = tree.level(n - 1);
  const int cap = w.max_level < 0 ? deepest : std::min(w.max_level, deepest);
  const bool limited = w.budget > 0;

  const bool adaptive = w.lod == Lod::adaptive && tree.has_detail();
  Selection sel;
  sel.level = cap;
  sel.lod = adaptive ? Lod::adaptive : Lod::uniform;
  sel.visited = 1;
  const Range root = cells_in_box(tree.bbox(0), q);
  if (root.empty()) return sel;
  if (limited && root.cells() > w.budget) {
    sel.level = 0;
    sel.pieces.push_back(strided_root(tree, root, w.budget));
    sel.stride = sel.pieces.back().stride;
    finish(sel);
    return sel;
  }

  // Invariant at level L: `leaves` = leaves at levels < L meeting the box, `frontier` =
  // grids at level L meeting the box, and count(L) <= budget.
  std::vector<Hit> leaves, frontier{{0, root}}, next;
  std::int64_t leaf_values = 0;
  double uniform_gain = 0;  // of the grids the uniform answer refines (adaptive only)
  int level = 0;
  for (; level < cap; ++level) {
    if constexpr (Tree::lazy) tree.load(children_of(tree, frontier));
    next.clear();
    std::int64_t next_leaf_values = leaf_values, next_values = 0;
    bool overflow = false;
    for (std::size_t i = 0; i < frontier.size() && !overflow; ++i) {
      const Hit& h = frontier[i];
      if (is_leaf(tree, h.row)) {
        next_leaf_values += h.range.cells();
        overflow = limited && next_leaf_values + next_values > w.budget;
        continue;
      }
      for (int c = 0; c < tree.max_children() && !overflow; ++c) {
        const std::int64_t child = tree.child(h.row, c);
        if (child < 0) continue;
        if (child >= n || tree.level(child) != level + 1)
          fail("row " + std::to_string(h.row) + " names child row " + std::to_string(child) +
               ", which is out of range or not on the next level");
        ++sel.visited;
        const Range r = cells_in_box(tree.bbox(child), q);
        if (r.empty()) continue;
        next.push_back({child, r});
        next_values += r.cells();
        overflow = limited && next_leaf_values + next_values > w.budget;
      }
    }
    if (overflow) break;  // count(level + 1) > budget: L* = level
    for (const auto& h : frontier)
      if (is_leaf(tree, h.row))
        leaves.push_back(h);
      else if (adaptive)
        uniform_gain += gain_of(tree, h.row);
    leaf_values = next_leaf_values;
    frontier.swap(next);
  }
  sel.level = level;
  leaves.insert(leaves.end(), frontier.begin(), frontier.end());
  if (adaptive) {
    Walk from_uniform = refine(tree, q, w, cap, leaves, uniform_gain, sel);
    Walk from_root = refine(tree, q, w, cap, {{0, root}}, 0.0, sel);
    leaves = std::move(from_root.gain > from_uniform.gain ? from_root.hits : from_uniform.hits);
  }
  for (const auto& h : leaves) {
    std::array<int, 3> count{};
    for (int a = 0; a < 3; ++a) count[a] = h.range.end[a] - h.range.first[a];
    sel.pieces.push_back(make_piece(tree, h.row, h.range.first, count, 1));
    sel.level = std::max(sel.level, sel.pieces.back().level);
  }
  finish(sel);
  return sel;
}
}  // namespace

Selection select(const TreeView& tree, const Window& w) { return select_in(SpanTree{tree}, w); }

Selection select(RowSource& tree, const Window& w) { return select_in(LazyTree{tree}, w); }

std::vector<std::int64_t> level_cut(const TreeView& tree, int max_level) {
  validate(SpanTree{tree});
  Window w;
  const auto& root = tree.bbox[0];
  w.box.lo = {root[0], root[2], root[4]};
  w.box.hi = {root[1], root[3], root[5]};
  w.max_level = max_level;
  return select(tree, w).rows();
}

namespace {
void check_fits(const Piece& p, std::array<int, 3> cells) {
  if (p.stride < 1) fail("extract: the piece's stride must be >= 1");
  for (int a = 0; a < 3; ++a) {
    if (cells[a] < 1) fail(std::string("extract: cells per grid on ") + kAxis[a] + " must be >= 1");
    if (p.count[a] < 0 || p.first[a] < 0 ||
        (p.count[a] > 0 && std::int64_t{p.first[a]} + std::int64_t{p.count[a] - 1} * p.stride >= cells[a]))
      fail(std::string("extract: the piece of row ") + std::to_string(p.row) + " does not fit into " +
           std::to_string(cells[a]) + " cells on " + kAxis[a]);
  }
}

template <class T>
T* extract_cells(const Piece& p, std::array<int, 3> cells, const T* src, T* out) {
  check_fits(p, cells);
  const std::int64_t sx = cells[0], sy = cells[1], st = p.stride;
  for (std::int64_t k = 0; k < p.count[2]; ++k)
    for (std::int64_t j = 0; j < p.count[1]; ++j) {
      const T* line = src + p.first[0] + sx * ((p.first[1] + j * st) + sy * (p.first[2] + k * st));
      for (std::int64_t i = 0; i < p.count[0]; ++i) *out++ = line[i * st];
    }
  return out;
}
}  // namespace

double* extract(const Piece& p, std::array<int, 3> cells, const double* grid_interior, double* out) {
  return extract_cells(p, cells, grid_interior, out);
}
float* extract(const Piece& p, std::array<int, 3> cells, const float* grid_interior, float* out) {
  return extract_cells(p, cells, grid_interior, out);
}
std::uint8_t* extract(const Piece& p, std::array<int, 3> cells, const std::uint8_t* grid_interior,
                      std::uint8_t* out) {
  return extract_cells(p, cells, grid_interior, out);
}

double* extract_streaming(const Piece& p, std::array<int, 3> cells, const double* grid_interior, double* out) {
#if defined(__SSE2__)
  if (p.stride != 1) return extract_cells(p, cells, grid_interior, out);
  check_fits(p, cells);
  // A live window's leaf cells: 34.6 MB out of the halo'd grids per window of 2^20 cells,
  // copied while the collector sends and the client reads on the same memory path. Not
  // fetching the destination's lines first saves a third of the copy's traffic: in five
  // paired runs a window into kept arrays gained 2-11 points of raw TCP's speed and the
  // default call 0-7 (bench/live/HISTORY.md, §14 "non-temporal stores").
  const std::int64_t sx = cells[0], sy = cells[1], nx = p.count[0];
  for (std::int64_t k = 0; k < p.count[2]; ++k)
    for (std::int64_t j = 0; j < p.count[1]; ++j) {
      const double* line = grid_interior + p.first[0] + sx * ((p.first[1] + j) + sy * (p.first[2] + k));
      std::int64_t i = 0;
      if (nx > 0 && (reinterpret_cast<std::uintptr_t>(out) & 15) != 0) {  // to a 16-byte boundary
        out[0] = line[0];
        i = 1;
      }
      for (; i + 2 <= nx; i += 2) _mm_stream_pd(out + i, _mm_loadu_pd(line + i));
      for (; i < nx; ++i) out[i] = line[i];
      out += nx;
    }
  return out;
#else
  return extract_cells(p, cells, grid_interior, out);
#endif
}

void streaming_fence() noexcept {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace rwd::window
