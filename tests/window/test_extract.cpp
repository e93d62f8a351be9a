// rwd::window::extract copies exactly the selected cells; the adapters give the same view.
#include <catch2/catch.hpp>
#include <algorithm>
#include <iterator>
#include <type_traits>

#include "../spacetree/random_tree.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/window/kernel_view.hpp"
#include "rewind/window/select.hpp"
#include "rewind/window/tree_view.hpp"

namespace {

/// The value stored in cell (i, j, k) of `row`: decodable, so a wrong copy is visible.
double code(std::int64_t row, int i, int j, int k) { return static_cast<double>(row * 1000000 + k * 10000 + j * 100 + i); }

/// Packed interior values of one row, x fastest (kernel::Reader::read_rows layout).
template <class T>
std::vector<T> grid_values(std::int64_t row, std::array<int, 3> s, T (*conv)(double)) {
  std::vector<T> v;
  for (int k = 0; k < s[2]; ++k)
    for (int j = 0; j < s[1]; ++j)
      for (int i = 0; i < s[0]; ++i) v.push_back(conv(code(row, i, j, k)));
  return v;
}

template <class T>
void check_extract(const rwd::window::Selection& sel, std::array<int, 3> s, T (*conv)(double)) {
  std::int64_t total = 0;
  for (const auto& p : sel.pieces) {
    const auto src = grid_values<T>(p.row, s, conv);
    std::vector<T> out(static_cast<std::size_t>(p.values()) + 1, conv(-1.0));
    const T* end = rwd::window::extract(p, s, src.data(), out.data());
    REQUIRE(end == out.data() + p.values());
    REQUIRE(out.back() == conv(-1.0));  // nothing written past the piece
    std::size_t n = 0;
    for (int k = 0; k < p.count[2]; ++k)
      for (int j = 0; j < p.count[1]; ++j)
        for (int i = 0; i < p.count[0]; ++i)
          REQUIRE(out[n++] == conv(code(p.row, p.first[0] + i * p.stride, p.first[1] + j * p.stride,
                                        p.first[2] + k * p.stride)));
    if constexpr (std::is_same_v<T, double>) {
      // The streaming copy (non-temporal stores) into a 16-byte aligned and a misaligned
      // destination: the same cells, nothing written before or after.
      for (const std::size_t shift : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
        alignas(16) static double buf[4096 + 8];
        REQUIRE(static_cast<std::size_t>(p.values()) + shift + 1 <= 4096 + 8);
        std::fill(std::begin(buf), std::end(buf), -1.0);
        double* at = buf + shift;
        REQUIRE(rwd::window::extract_streaming(p, s, src.data(), at) == at + p.values());
        rwd::window::streaming_fence();
        for (std::size_t b = 0; b < shift; ++b) REQUIRE(buf[b] == -1.0);
        REQUIRE(at[p.values()] == -1.0);
        REQUIRE(std::equal(at, at + p.values(), out.begin()));
      }
    }
    total += p.values();
  }
  REQUIRE(total == sel.values);
}

double as_double(double x) { return x; }
float as_float(double x) { return static_cast<float>(x); }
std::uint8_t as_byte(double x) { return static_cast<std::uint8_t>(static_cast<std::int64_t>(x) % 251); }

}  // namespace

SCENARIO("extract copies exactly the selected cells", "[window]") {
  for (const int dim : {2, 3}) {
    GIVEN("a " << dim << "-D random tree with 4 cells per grid") {
      const auto tree = rwd::test::random_tree(rwd::test::unit_shape(dim, 4), 11u + static_cast<unsigned>(dim));
      const auto arrays = rwd::window::arrays_of(tree);
      const std::array<int, 3> s = arrays.cells;
      rwd::window::Window w;
      w.box = {{0.1, 0.27, 0.0}, {0.8, 0.61, dim == 2 ? 0.125 : 0.5}};
      for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{200}, std::int64_t{3}}) {
        w.budget = budget;
        const auto sel = rwd::window::select(arrays.view(), w);
        THEN("budget " << budget << ": doubles, floats and bytes come out cell by cell") {
          REQUIRE(!sel.pieces.empty());
          if (budget == 3) REQUIRE(sel.stride > 1);
          check_extract<double>(sel, s, as_double);
          check_extract<float>(sel, s, as_float);
          check_extract<std::uint8_t>(sel, s, as_byte);
        }
      }
    }
  }
  GIVEN("a piece that does not fit the grid") {
    rwd::window::Piece p;
    p.first = {2, 0, 0};
    p.count = {2, 1, 1};
    p.stride = 2;
    std::vector<double> src(16), out(4);
    REQUIRE_THROWS_WITH(rwd::window::extract(p, {4, 4, 1}, src.data(), out.data()),
                        Catch::Contains("does not fit"));
    p.stride = 1;
    p.first = {3, 0, 0};
    REQUIRE_THROWS_WITH(rwd::window::extract_streaming(p, {4, 4, 1}, src.data(), out.data()),
                        Catch::Contains("does not fit"));
  }
}

SCENARIO("a kernel::StepTopology and the spacetree adapter give the same selection", "[window]") {
  const auto tree = rwd::test::random_tree(rwd::test::unit_shape(3, 3), 5);
  const auto arrays = rwd::window::arrays_of(tree);
  // A StepTopology as Reader::read_topology fills it for a step written from this tree.
  rwd::kernel::StepTopology topo;
  topo.n_grids = static_cast<std::int64_t>(arrays.level.size());
  topo.max_children = arrays.max_children;
  topo.level = arrays.level;
  topo.bbox = arrays.bbox;
  topo.child_rows = arrays.child_rows;
  const auto view = rwd::window::view_of(topo, rwd::kernel::BlockShape{4, 4, 4});
  REQUIRE(view.cells == arrays.cells);
  REQUIRE(view.level.data() == topo.level.data());  // borrowed, not copied
  rwd::window::Window w;
  w.box = {{0.2, 0.2, 0.5}, {0.9, 0.7, 0.5}};
  w.budget = 500;
  const auto a = rwd::window::select(view, w);
  const auto b = rwd::window::select(arrays.view(), w);
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.level == b.level);
  REQUIRE(a.values == b.values);
  REQUIRE(a.values > 0);
}
