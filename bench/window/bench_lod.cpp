// Adaptive vs uniform windows (window::select, Window::lod): quality at equal budget and
// the selection's latency. Not a test; results in docs/benchmarks.md ("Adaptive level of
// detail"). Pure and in memory: synthetic fields on full trees (parents the average of
// their children, as the forest restricts; details by their definition, brute force in
// tests/window/field.hpp) and a 1.3e8-cell 3-D tree whose details come from a formula.
//   rewind_bench_window_lod [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../tests/window/field.hpp"
#include "rewind/spacetree/tree.hpp"
#include "rewind/window/select.hpp"
#include "rewind/window/tree_view.hpp"

namespace {

using rwd::window::Lod;
using rwd::window::Window;

rwd::spacetree::TreeShape unit(int dim, int s, int depth) {
  rwd::spacetree::TreeShape sh;
  sh.domain.lo = {0, 0, 0};
  sh.domain.hi = {1, 1, dim == 2 ? 1.0 / s : 1.0};
  sh.r = {2, 2, dim == 2 ? 1 : 2};
  sh.s = {s, s, dim == 2 ? 1 : s};
  sh.max_depth = depth;
  return sh;
}

/// A body's sharp edge and its wake: a thin oscillating band behind it.
double flow(const std::array<double, 3>& x) {
  const double r = std::hypot(x[0] - 0.2, x[1] - 0.5, x[2] > 0.1 ? x[2] - 0.5 : 0.0);
  const double wake = x[0] > 0.25 ? 0.5 * std::exp(-std::pow((x[1] - 0.5) / 0.04, 2)) * std::sin(30 * x[0]) : 0.0;
  return 1.0 + std::tanh((r - 0.05) / 0.003) + wake;
}

/// `octants`: the walk by octants (the field's shares, format 1.10), else whole grids (1.9).
void quality(const char* name, const rwd::spacetree::Tree& tree, bool octants) {
  const auto arrays = rwd::window::arrays_of(tree);
  auto view = arrays.view();
  const auto field = rwd::test::make_field(view, flow);
  view.detail = field.detail;
  if (octants) view.shares = field.shares;
  const rwd::window::Box boxes[] = {{{0, 0, 0}, {1, 1, view.bbox[0][5]}}, {{0.25, 0.35, 0}, {1, 0.65, view.bbox[0][5]}}};
  const char* box_names[] = {"whole domain", "wake [0.25,1]x[0.35,0.65]"};
  for (int b = 0; b < 2; ++b) {
    std::printf(
        "\n%s, %s, %s\n| budget | uniform cells | uniform error | adaptive cells | adaptive error | ratio "
        "|\n|---|---|---|---|---|---|\n",
        name, box_names[b], octants ? "by octants (shares)" : "whole grids (details only)");
    double log_sum = 0, worst = 0;
    int n = 0;
    for (double budget = 400; budget <= 2.6e5; budget *= 2) {
      Window w;
      w.box = boxes[b];
      w.budget = static_cast<std::int64_t>(budget);
      const auto u = rwd::window::select(view, w);
      w.lod = Lod::adaptive;
      const auto a = rwd::window::select(view, w);
      const double eu = rwd::test::window_error(view, field, w, u), ea = rwd::test::window_error(view, field, w, a);
      if (eu <= 0) continue;
      std::printf("| %lld | %lld | %.3g | %lld | %.3g | %.2f |\n", static_cast<long long>(w.budget),
                  static_cast<long long>(u.values), eu, static_cast<long long>(a.values), ea, ea / eu);
      worst = std::max(worst, ea / eu);
      if (ea > 1e-9 * eu) log_sum += std::log(ea / eu), ++n;  // adaptive exact (to rounding): no ratio to average
    }
    std::printf("geometric mean ratio %.2f over the %d budgets where both err, worst %.2f\n", std::exp(log_sum / n), n,
                worst);
  }
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

void latency(int rounds) {
  const auto tree = rwd::spacetree::Tree::full(unit(3, 16, 5), 5);
  const auto arrays = rwd::window::arrays_of(tree);
  auto view = arrays.view();
  std::vector<double> detail(arrays.level.size(), 0.0);
  for (std::size_t r = 0; r < detail.size(); ++r) {
    const auto& g = arrays.bbox[r];
    const std::array<double, 3> c{0.5 * (g[0] + g[1]), 0.5 * (g[2] + g[3]), 0.5 * (g[4] + g[5])};
    if (arrays.child_rows[r * static_cast<std::size_t>(view.max_children)] >= 0) detail[r] = 1.0 / (0.01 + std::abs(flow(c) - 1));
  }
  view.detail = detail;
  // Shares by the same formula at each octant's centre (every row but the root).
  std::vector<double> shares(arrays.level.size() * 8, 0.0);
  for (std::size_t r = 1; r < arrays.level.size(); ++r) {
    const auto& g = arrays.bbox[r];
    for (int o = 0; o < 8; ++o) {
      std::array<double, 3> c{};
      for (int a = 0; a < 3; ++a) c[a] = g[2 * a] + (0.25 + 0.5 * (o >> a & 1)) * (g[2 * a + 1] - g[2 * a]);
      shares[8 * r + static_cast<std::size_t>(o)] = 1.0 / (0.01 + std::abs(flow(c) - 1));
    }
  }
  auto octant_view = view;
  octant_view.shares = shares;
  std::printf(
      "\nlatency of select() on a full 3-D tree, %zu grids, %.3g cells (16^3 per grid), in memory, %d rounds\n"
      "| box | budget | uniform p50 ms | uniform p95 ms | adaptive p50 ms | adaptive p95 ms | adaptive cells | "
      "octants p50 ms | octants p95 ms | octants cells | rows visited u / a / o |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      arrays.level.size(), static_cast<double>(tree.leaf_count()) * 4096, rounds);
  const rwd::window::Box boxes[] = {{{0, 0, 0}, {1, 1, 1}}, {{0.25, 0.35, 0.35}, {1, 0.65, 0.65}}};
  for (int b = 0; b < 2; ++b)
    for (const std::int64_t budget : {10000, 100000, 1000000}) {
      std::vector<double> t[3];
      rwd::window::Selection last[3];
      for (int round = 0; round < rounds; ++round)
        for (int lod = 0; lod < 3; ++lod) {  // uniform, whole grids, octants: interleaved
          Window w;
          w.box = boxes[b];
          w.budget = budget;
          w.lod = lod ? Lod::adaptive : Lod::uniform;
          const auto t0 = std::chrono::steady_clock::now();
          last[lod] = rwd::window::select(lod == 2 ? octant_view : view, w);
          t[lod].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
      std::printf("| %s | %lld | %.3f | %.3f | %.3f | %.3f | %lld | %.3f | %.3f | %lld | %lld / %lld / %lld |\n",
                  b ? "wake" : "whole", static_cast<long long>(budget), percentile(t[0], 0.5), percentile(t[0], 0.95),
                  percentile(t[1], 0.5), percentile(t[1], 0.95), static_cast<long long>(last[1].values),
                  percentile(t[2], 0.5), percentile(t[2], 0.95), static_cast<long long>(last[2].values),
                  static_cast<long long>(last[0].visited), static_cast<long long>(last[1].visited),
                  static_cast<long long>(last[2].visited));
    }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 30;
  for (const bool octants : {false, true}) {
    quality("2-D full tree, 16x16 cells per grid, depth 5 (512x512 leaf cells)",
            rwd::spacetree::Tree::full(unit(2, 16, 5), 5), octants);
    quality("3-D full tree, 8^3 cells per grid, depth 3 (64^3 leaf cells)",
            rwd::spacetree::Tree::full(unit(3, 8, 3), 3), octants);
  }
  latency(rounds);
  return 0;
}
