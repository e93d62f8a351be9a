#include "rewind/config/estimate.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace rwd::config {

using spacetree::Int3;
using spacetree::TreeShape;

namespace {

// Index range [first, last] of the level grids along one axis that meet [lo, hi]
// (touching counts: an upper bound). Empty when last < first.
std::pair<std::int64_t, std::int64_t> index_range(double lo, double hi, double origin, double width, std::int64_t n) {
  const double a = std::floor((lo - origin) / width), b = std::floor((hi - origin) / width);
  const auto first = static_cast<std::int64_t>(std::clamp(a, 0.0, static_cast<double>(n - 1)));
  const auto last = static_cast<std::int64_t>(std::clamp(b, -1.0, static_cast<double>(n - 1)));
  if (hi < origin || lo > origin + width * static_cast<double>(n)) return {0, -1};
  return {first, last};
}

// Grids of `level` that meet `region` grown by `grow` per axis.
double count_meeting(const TreeShape& sh, const RefineRegion& region, int level, const std::array<double, 3>& grow) {
  const Int3 n = sh.grids_per_axis(level);
  const auto w = sh.grid_extent(level);
  const bool sphere = region.radius > 0.0;
  double reach = 0.0;  // Euclidean growth of a sphere that covers the per-axis growth
  for (int a = 0; a < 3; ++a) reach += grow[a] * grow[a];
  const double rho = region.radius + std::sqrt(reach);
  std::array<std::pair<std::int64_t, std::int64_t>, 3> range{};
  double boxed = 1.0;
  for (int a = 0; a < 3; ++a) {
    const double lo = sphere ? region.center[a] - rho : region.box.lo[a] - grow[a];
    const double hi = sphere ? region.center[a] + rho : region.box.hi[a] + grow[a];
    range[a] = index_range(lo, hi, sh.domain.lo[a], w[a], n[a]);
    if (range[a].second < range[a].first) return 0.0;
    boxed *= static_cast<double>(range[a].second - range[a].first + 1);
  }
  if (!sphere) return boxed;
  // A sphere, one row of grids along x at a time; too many rows: the box bound.
  const double rows = static_cast<double>(range[1].second - range[1].first + 1) *
                      static_cast<double>(range[2].second - range[2].first + 1);
  if (rows > 4e6) return boxed;
  const auto gap = [&](int a, std::int64_t i) {  // distance from the centre to grid slab i
    const double lo = sh.domain.lo[a] + w[a] * static_cast<double>(i), hi = lo + w[a];
    return std::max({0.0, lo - region.center[a], region.center[a] - hi});
  };
  double count = 0.0;
  for (auto k = range[2].first; k <= range[2].second; ++k) {
    const double dz = gap(2, k);
    for (auto j = range[1].first; j <= range[1].second; ++j) {
      const double dy = gap(1, j), left = rho * rho - dy * dy - dz * dz;
      if (left < 0.0) continue;
      const double h = std::sqrt(left);
      const auto [first, last] = index_range(region.center[0] - h, region.center[0] + h, sh.domain.lo[0], w[0], n[0]);
      if (last >= first) count += static_cast<double>(last - first + 1);
    }
  }
  return count;
}

}  // namespace

TreeEstimate estimate_tree(const TreeCase& c, std::int64_t stop_above) {
  const TreeShape& sh = c.shape;
  TreeEstimate e;
  const double children = sh.children_per_grid();
  double grids = 1.0, total = 0.0;
  for (int level = 0; level <= sh.max_depth && grids > 0.0; ++level) {
    e.grids_per_level.push_back(static_cast<std::int64_t>(std::min(grids, 9.0e18)));
    total += grids;
    if (total > static_cast<double>(stop_above)) {
      e.stopped = true;
      break;
    }
    if (level == sh.max_depth) break;
    double refined = 0.0;
    if (level < c.base_depth) {
      refined = grids;
    } else {
      for (const auto& r : c.regions) {
        if (r.level <= level) continue;
        // Balancing refines a grid of this level only next to a refined grid of the next
        // level, so at most the widths of the levels between here and the region's away.
        std::array<double, 3> grow{};
        for (int k = level + 1; c.balance && k < r.level; ++k)
          for (int a = 0; a < 3; ++a) grow[a] += sh.grid_extent(k)[a];
        refined += count_meeting(sh, r, level, grow);
      }
      refined = std::min(refined, grids);
    }
    grids = refined * children;
  }
  e.grids = static_cast<std::int64_t>(std::min(total, 9.0e18));
  e.cells = static_cast<std::int64_t>(std::min(total * static_cast<double>(sh.cells_per_grid()), 9.0e18));
  return e;
}

MemoryModel memory_model(const TreeShape& shape, int variables) {
  // Measured (docs/validation.md, "Memory"): a compute rank holds `variables` halo'd arrays per grid, the
  // cell types, the solver's per-grid tables and the output step's linear buffer (the
  // five state variables of its grids).
  // The forest pads every axis with its one-cell halo, the third of a 2-D grid too (its
  // arrays are 3 (s+2)(s+2) doubles, not (s+2)(s+2): most of a 2-D rank's fields).
  std::int64_t padded = 1, interior = shape.cells_per_grid();
  for (int a = 0; a < 3; ++a) padded *= shape.s[a] + 2;
  MemoryModel m;
  m.tree_bytes_per_grid = 1536;  // measured: ~1.2 kB per grid (tree + partition + topology)
  // measured: ~10 kB per grid of plan, neighbour tables and exchange schedule
  m.field_bytes_per_grid = 8 * padded * variables + 8 * 5 * interior + 2 * interior + 12288;
  m.process_bytes = std::int64_t{32} << 20;  // measured: 26-30 MiB, ~22 MiB of it the libraries' pages
  return m;
}

std::int64_t bytes_needed(const TreeEstimate& e, const MemoryModel& m, bool holds_tree, int compute_ranks,
                          double imbalance) {
  double bytes = static_cast<double>(m.process_bytes);
  if (holds_tree) bytes += static_cast<double>(e.grids) * static_cast<double>(m.tree_bytes_per_grid);
  if (compute_ranks > 0)
    bytes += static_cast<double>(e.grids) * static_cast<double>(m.field_bytes_per_grid) * imbalance / compute_ranks;
  return static_cast<std::int64_t>(std::min(bytes, 9.0e18));
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "kiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) bytes /= 1024.0, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.{}f} {}", bytes, bytes < 10 ? 2 : 1, units[u]);
}

std::int64_t parse_bytes(const std::string& text) {
  std::size_t pos = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string unit = text.substr(pos);
  for (auto& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (unit.ends_with("IB")) unit.erase(unit.size() - 2);
  else if (unit.ends_with("B")) unit.pop_back();
  const std::string units = "KMGTP";
  double scale = 1.0;
  if (unit.size() == 1 && units.find(unit[0]) != std::string::npos)
    scale = std::pow(1024.0, static_cast<double>(units.find(unit[0]) + 1));
  else if (!unit.empty())
    pos = 0;
  if (pos == 0 || !std::isfinite(v) || v < 0 || v * scale > 9.0e18)
    throw std::invalid_argument(fmt::format("'{}' is not a size (examples: 8G, 512MiB, 2000000000)", text));
  return static_cast<std::int64_t>(v * scale);
}

}  // namespace rwd::config
