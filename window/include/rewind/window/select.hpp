// Sliding-window selection on a space tree: which cells of which grids answer a window
// query (a box, a budget of values, an optional level cap). Pure code: no MPI, no HDF5,
// no I/O. Every function here is a pure function of its arguments, thread-safe (it
// only reads the borrowed arrays), and throws std::invalid_argument on bad input,
// never anything else (except std::bad_alloc). The one exception: select() on a
// RowSource calls its load(), which may do I/O and throw what it throws.
//
// The answer follows the sliding window of Mundani et al. as used by Ertl, Frisch and
// Mundani: walk the tree from the root, keep the grids that meet the box, refine while
// the cells inside the box still fit the budget, and return the FINEST level L* that
// fits, uniform over the box and cropped to it. Where the tree is not refined to L*
// inside the box, coarser leaves fill the gap (every Piece says its level). If even the
// root's cells inside the box exceed the budget, level 0 is subsampled with the
// smallest integer stride k >= 2 that fits. Cells are copied, never interpolated.
//
// Definitions (the data contract; tests/window checks them against brute force):
// - Tolerance. On axis a, tol_a = 1e-9 * (root extent on a). Box edges placed on cell
//   faces (from a GUI, or a step's own bbox) then pick up no zero-width extra layer.
// - Slice. An axis with box.hi - box.lo <= 2 tol_a is a slice at p = (lo + hi) / 2.
// - Meets. A cell [c0, c1] meets the box on axis a if
//     range axis: c0 < box.hi - tol && c1 > box.lo + tol;
//     slice axis: c0 - tol <= p < c1 - tol, or the closing face: |c1 - D| <= tol and
//                 |p - D| <= tol, D = the domain's (root's) hi on that axis.
//   A cell meets the box if it meets it on all three axes; a grid meets the box if one
//   of its cells does. A box outside the domain meets nothing (empty Selection).
// - Candidates. S(L) = grids at level L that meet the box, plus leaves at levels < L
//   that meet the box. count(L) = sum over S(L) of that grid's cells meeting the box;
//   count is non-decreasing in L.
// - Choice. With D_max = the tree's deepest level and cap = min(max_level, D_max)
//   (max_level -1 = none): L* = the largest L <= cap with count(L) <= budget
//   (budget 0 = unlimited, so L* = cap). If count(0) > budget: L* = 0 and stride k.
// - Stride. Level 0 only (the root grid): on every axis the cells i with i % k == 0
//   inside the box's cell range [first, end) (a lattice anchored at the root's cell 0,
//   so it does not shift while the window pans); an axis whose range holds no lattice
//   cell (a slice or a box thinner than k cells) keeps its first cell. k = the smallest
//   k >= 2 whose value count fits the budget; it always exists because k >= the widest
//   range gives one value.
// - Cost. The traversal looks only at the root and at children of grids that meet the
//   box at levels <= L* (it stops as soon as level L*+1 overflows): the cost follows
//   the budget and the box, not the tree size. It never scans all rows.
//
// Adaptive level of detail (Window::lod = Lod::adaptive; uniform stays the default and
// the paper's rule). The budget is spent where the field changes, on mixed levels:
// - Detail. Each row may carry a detail d >= 0 (TreeView::detail, RowSource::detail;
//   for a file, column 2 of the step's statistics/<var>): the L2 norm, over the cells of
//   the grid's children, of the children's values minus the grid's own cells prolonged
//   piecewise-constant onto them (0 for a leaf). A view without details answers an
//   adaptive window with the uniform rule (Selection::lod says which rule answered).
// - Gain. Refining grid g removes gain(g) = d(g)^2 * (volume of one child cell), the
//   volume of one of g's cells divided by g's number of children: with parents the
//   average of their children (the forest's restriction), exactly the squared L2 error
//   against the leaves that replacing g's cells by its children's removes.
// - Walks. Two greedy walks, each from a set of grids meeting the box: one from the
//   coarsest (the root), one from the uniform answer above (L* and its coarser leaves).
//   A walk's candidates are its grids below the cap that have children. It takes the
//   candidate with the largest gain (ties: the smaller row); that grid's children that
//   meet the box replace it if the values then still fit the budget (budget 0: always),
//   and become candidates; otherwise it stays, never tried again (values only grow).
//   It ends when no candidate is left.
// - Choice. The walk whose refined grids have the larger total gain answers (the uniform
//   answer's own refined grids count for the second walk; a tie: the second). The gains
//   are summed in the order the walks meet them: the uniform walk's grids level by level
//   in row order, then each walk's refinements in the order made. With parents the
//   average of their children and a box that cuts no grid's cells, a total gain is
//   exactly the squared L2 error the window removes, so an adaptive window is never
//   less accurate than the uniform one, which the second walk only refines.
// - Answer. Pieces are cropped to the box as above, copied, never interpolated; a
//   level-0 stride (the root overflowing) is the answer for both rules;
//   Selection::level is the larger of L* and the deepest piece's level.
// - Cost. Beyond the uniform walk, only the children of tried candidates are looked at
//   (a RowSource is asked to load them, with their details, one candidate at a time):
//   the cost follows the budget and the box. A detail that is negative or not finite
//   on a visited row is refused (std::invalid_argument).
//
// Octants (an adaptive window of a tree with shares: TreeView::shares, RowSource::share;
// for a file, the step's shares/<var>, format 1.10). The walks above buy a grid's
// children all at once (7 grids' cells in 3-D); with shares they buy half a grid per
// refined axis at a time, which is what answers budgets between two levels:
// - Octants. A grid's cells split in halves along each refined axis (max_children 2, 4,
//   8: x; x, y; x, y, z), octant o = ox + 2 oy + 4 oz (1 = the upper half); a child lies
//   in the octant of its parent where its box's lower corner lies. Applies when
//   max_children is 2, 4 or 8 and every refined axis's cell count divides by 4 (else the
//   walks above answer).
// - Units. Unit (g, o), g not the root: g's cells in its octant o shown instead of its
//   parent p's cells there. It may be added once p shows that region (the unit (p, the
//   octant g lies in) is added, or p is the root); it adds values = g's cells in octant o
//   meeting the box minus p's cells there meeting the box, and gains share(g, o)^2 * (the
//   volume of one of g's cells). A unit whose own cells miss the box is never offered.
// - Walks. As above, from the root (showing everything) and from the uniform answer
//   (every unit meeting the box of every grid on levels 1..L* meeting it; gains summed
//   level by level, grids in row order, children and units in octant order); each adds
//   the offered unit with the largest gain (ties: the smaller row, then octant) if the
//   values still fit, and offers the units of the child in that octant (levels <= cap);
//   otherwise drops it. The larger total gain answers (a tie: the uniform one).
// - Pieces. A grid shows the blocks of its 4 x 4 x 4 lattice (one block along an axis it
//   does not refine) that lie in its added octants (the root: all) and not in an added
//   unit of its child there. Each grid's shown blocks become boxes: in z, y, x order,
//   from each shown block not yet taken, grown along x, then y, then z over blocks that
//   are shown or meet no cell of the box; each box cropped to the box is one piece. A
//   grid may thus give several pieces (Selection::slots()); with nothing added below it,
//   one, as the uniform rule's.
//
// Row order contract (as in kernel::StepTopology and spacetree::Tree::nodes()): rows are
// level-major and Morton-ordered within a level, row 0 is the root, children of a
// grid are listed in child_rows (-1 = none; a grid with no child is a leaf).
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "rewind/spacetree/geometry.hpp"

namespace rwd::window {

/// Axis-aligned physical box [lo, hi] per axis (lo <= hi; lo == hi on an axis = slice):
/// the tree's own box type, one for the whole project. Note its default is the unit
/// box; a window's box and a selection's covered box start at zero (a point) instead.
using Box = spacetree::Box;
/// The zero box, {lo = hi = (0, 0, 0)}.
inline constexpr Box kZeroBox{{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};

/// How a window spends its budget: one uniform level over the box (the paper's rule,
/// the default), or refined where the field changes (definitions above).
enum class Lod { uniform, adaptive };

/// A tree as borrowed arrays, one entry per row. The arrays must outlive every call
/// that receives the view; nothing is copied. kernel::StepTopology fits directly
/// (rewind/window/kernel_view.hpp), spacetree::Tree through rewind/window/tree_view.hpp.
struct TreeView {
  std::array<int, 3> cells{};                     ///< cells per grid per axis (2-D: s_z = 1)
  int max_children = 0;                           ///< child slots per row
  std::span<const std::int32_t> level;            ///< level of each row, root = 0
  std::span<const std::array<double, 6>> bbox;    ///< {xmin,xmax,ymin,ymax,zmin,zmax}
  std::span<const std::int64_t> child_rows;       ///< n * max_children, -1 = none
  /// Detail of each row for adaptive windows (definitions above), one variable's; empty =
  /// none, and an adaptive window answers with the uniform rule.
  std::span<const double> detail;
  /// Each row's octants' shares of its parent's detail for adaptive windows ("Octants"
  /// above), rows() * max_children, one variable's; empty = none.
  std::span<const double> shares;
  [[nodiscard]] std::int64_t rows() const { return static_cast<std::int64_t>(level.size()); }
};

/// A tree whose rows are read as the walk reaches them (a big step of a file:
/// window::StepRows, rewind/window/kernel_view.hpp), so a window's cost follows the rows
/// it visits, not the tree. select() calls load() with the rows it is about to look at
/// (the root and the last row first, then on each level the children of the grids it
/// keeps, all of them even if the walk stops early) and asks for no other row's entries.
class RowSource {
 public:
  virtual ~RowSource() = default;
  [[nodiscard]] virtual std::array<int, 3> cells() const = 0;  ///< as TreeView::cells
  [[nodiscard]] virtual int max_children() const = 0;
  [[nodiscard]] virtual std::int64_t rows() const = 0;
  /// Makes the entries of `rows` (ascending, distinct, in [0, rows())) available.
  virtual void load(const std::vector<std::int64_t>& rows) = 0;
  [[nodiscard]] virtual int level(std::int64_t row) const = 0;
  [[nodiscard]] virtual const std::array<double, 6>& bbox(std::int64_t row) const = 0;
  /// Child row in `slot` (< max_children()), -1 = none.
  [[nodiscard]] virtual std::int64_t child(std::int64_t row, int slot) const = 0;
  /// Whether detail() answers (for a file: the step has statistics for the variable);
  /// false (the default): an adaptive window answers with the uniform rule.
  [[nodiscard]] virtual bool has_detail() const { return false; }
  /// The detail of a loaded row (as TreeView::detail); asked only if has_detail().
  [[nodiscard]] virtual double detail(std::int64_t /*row*/) const { return 0.0; }
  /// Whether share() answers (a file: the step has shares/<var>); false: no octant walk.
  [[nodiscard]] virtual bool has_shares() const { return false; }
  /// Octant `o`'s share of its parent's detail of a loaded row; asked only if has_shares().
  [[nodiscard]] virtual double share(std::int64_t /*row*/, int /*o*/) const { return 0.0; }
};

/// One window query.
struct Window {
  Box box = kZeroBox;
  std::int64_t budget = 0;  ///< most cell values returned per variable; 0 = unlimited
  int max_level = -1;       ///< deepest level returned; -1 = no cap
  Lod lod = Lod::uniform;   ///< uniform (the paper's rule) or adaptive
};

/// One selected grid, cropped to the box (and subsampled if stride > 1).
struct Piece {
  std::int64_t row = 0;
  int level = 0;
  std::array<int, 3> first{};      ///< first returned cell index inside the grid, per axis
  std::array<int, 3> count{};      ///< cells returned per axis (after stride)
  int stride = 1;                  ///< every stride-th cell from `first`
  std::array<double, 3> origin{};  ///< physical lo corner of the first returned cell
  std::array<double, 3> spacing{}; ///< physical cell size * stride
  std::array<double, 3> cell{};    ///< physical cell size (the extent of one returned cell)
  /// count[0] * count[1] * count[2].
  [[nodiscard]] std::int64_t values() const {
    return std::int64_t{count[0]} * count[1] * count[2];
  }
};

/// Copies where a piece lies (level, first, count, stride, origin, spacing) between the
/// piece types that carry it: this one, the neighbourhood server's and the collector's
/// messages.
template <class To, class From>
void copy_placement(const From& from, To& to) {
  to.level = from.level;
  for (std::size_t a = 0; a < 3; ++a) {
    to.first[a] = from.first[a];
    to.count[a] = from.count[a];
    to.origin[a] = from.origin[a];
    to.spacing[a] = from.spacing[a];
  }
  to.stride = from.stride;
}

/// The answer to a Window.
struct Selection {
  int level = 0;                 ///< L* (adaptive: or the deepest piece's, if deeper); pieces say their own level
  Lod lod = Lod::uniform;        ///< the rule that answered: adaptive only if asked and details exist
  int stride = 1;                ///< 1 unless level 0 overflowed the budget
  std::int64_t values = 0;       ///< sum of piece values; <= budget unless budget == 0
  std::vector<Piece> pieces;     ///< sorted by row (level-major, Morton within a level), a row's by first z, y, x
  /// The pieces' rows as maximal runs of consecutive rows, for contiguous reads.
  struct Run {
    std::int64_t first_row = 0, count = 0;
  };
  std::vector<Run> runs;
  std::int64_t visited = 0;      ///< rows whose bbox the traversal looked at (each time it did)
  Box covered = kZeroBox;        ///< union (bounding box) of the returned cells; zero if empty
  [[nodiscard]] bool empty() const { return pieces.empty(); }
  /// The pieces' rows in order, each once (what kernel::Reader::read_rows wants).
  [[nodiscard]] std::vector<std::int64_t> rows() const;
  /// For each piece, the index of its row in rows(): where its grid's values are among
  /// rows read in that order (an octant walk's grid may give several pieces).
  [[nodiscard]] std::vector<std::size_t> slots() const;
};

/// The cells answering `w` on `tree` (definitions above). Pure, thread-safe.
/// Throws std::invalid_argument (one message naming the problem) if the box has a NaN
/// or infinite bound or lo > hi on an axis, the budget is negative, max_level < -1,
/// or the tree view is inconsistent (no rows, array sizes that disagree, cells < 1,
/// a child row out of range on the visited path; adaptive: a detail or share array whose
/// size is not rows() or rows() * max_children, a negative or non-finite detail or share
/// on the visited path).
Selection select(const TreeView& tree, const Window& w);
/// The same selection on a tree read on demand (equal to select() on the whole tree, piece
/// for piece); throws what the source's load() throws.
Selection select(RowSource& tree, const Window& w);

/// The level-of-detail cut of the ParaView reader (its old `lod_rows`): every grid on
/// `max_level` plus every leaf above it (max_level -1: all leaves), sorted by row.
/// Equals select() on the whole domain with budget 0 and that cap. Visits every grid
/// down to the cut. Pure; throws std::invalid_argument like select().
std::vector<std::int64_t> level_cut(const TreeView& tree, int max_level);

/// Copies the cells of piece `p` out of one grid's packed interior values (`cells`
/// per axis, x fastest, as kernel::Reader::read_rows returns a row) into `out`, x
/// fastest, p.values() values. Returns out + p.values(). Pure; throws
/// std::invalid_argument if the piece does not fit into a grid of `cells`.
double* extract(const Piece& p, std::array<int, 3> cells, const double* grid_interior, double* out);
float* extract(const Piece& p, std::array<int, 3> cells, const float* grid_interior, float* out);
std::uint8_t* extract(const Piece& p, std::array<int, 3> cells, const std::uint8_t* grid_interior,
                      std::uint8_t* out);
/// As extract(), for an `out` that another process or CPU reads next and this one does
/// not (a live window's shared memory): the values are written with non-temporal stores
/// (x86-64 SSE2, stride 1), which neither fetch `out`'s cache lines first nor push the
/// grids out of this CPU's caches; other strides and CPUs copy as extract() does. Call
/// streaming_fence() before telling the reader the values are there: non-temporal
/// stores are not ordered by release fences or atomics alone.
double* extract_streaming(const Piece& p, std::array<int, 3> cells, const double* grid_interior, double* out);
/// Orders the non-temporal stores of extract_streaming() before later stores (sfence).
void streaming_fence() noexcept;

}  // namespace rwd::window
