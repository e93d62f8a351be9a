// Copying a selection's pieces out of grids (select.hpp, extract()).
#include "rewind/window/select.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstdint>

#include "walk.hpp"

namespace rwd::window {
namespace {
using detail::fail;
using detail::kAxis;

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
std::uint8_t* extract(const Piece& p, std::array<int, 3> cells, const std::uint8_t* grid_interior, std::uint8_t* out) {
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
