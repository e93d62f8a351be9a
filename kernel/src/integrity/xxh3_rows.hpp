// Private: the XXH3-64 of a grid row, compiled once per instruction set.
//
// Included by exactly three files, each with REWIND_XXH3_ISA naming a namespace:
// xxh3_rows_base.cpp (the x86-64 baseline, SSE2), xxh3_rows_avx2.cpp (built with
// -mavx2, about 3x faster on cache-hot rows: bench/kernel/HISTORY.md, "Kernel write/read") and
// xxh3_rows_avx512.cpp (-mavx512f); checksum.cpp picks one at run time.
// xxHash picks its vector code from the compiler's target macros, and XXH_INLINE_ALL
// makes every xxHash function static, so the copies never meet at link time. For the
// same reason this file must not instantiate any template outside its own namespace
// (std::vector etc.): the linker could keep a vector copy for callers on any CPU.
#pragma once
#ifndef REWIND_XXH3_ISA
#error "define REWIND_XXH3_ISA before including xxh3_rows.hpp"
#endif

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>  // traits only: no code is instantiated from it

namespace rwd::kernel::detail {
// direct_io.cpp, built for the baseline: called, never compiled here.
void stream_copy(void* dst, const void* src, std::size_t bytes);
}  // namespace rwd::kernel::detail

namespace rwd::kernel::detail::REWIND_XXH3_ISA {

std::uint64_t hash_bytes(const void* p, std::size_t n) { return XXH3_64bits(p, n); }

std::uint64_t hash_and_copy(void* dst, const void* src, std::size_t n) {
  // Pieces of 2 KiB: each is hashed from memory into L1 and copied out of L1 before the
  // next, where a whole row (256 KiB in the bench) would be read twice, the second time
  // from L2. The streaming state gives the one-shot hash's bits (xxHash's guarantee).
  constexpr std::size_t kPiece = std::size_t{2} << 10;
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  for (std::size_t at = 0; at < n; at += kPiece) {
    const std::size_t m = n - at < kPiece ? n - at : kPiece;
    XXH3_64bits_update(&state, static_cast<const unsigned char*>(src) + at, m);
    stream_copy(static_cast<unsigned char*>(dst) + at, static_cast<const unsigned char*>(src) + at, m);
  }
  return XXH3_64bits_digest(&state);
}

template <typename Stored, typename Mem>
std::uint64_t hash_interior(const Mem* array, int sx, int sy, int sz, int halo) {
  if constexpr (std::is_same_v<Stored, Mem>) {
    if (halo == 0)
      return hash_bytes(array, static_cast<std::size_t>(sx) * static_cast<std::size_t>(sy) *
                                   static_cast<std::size_t>(sz) * sizeof(Stored));
  }
  const std::size_t nx = static_cast<std::size_t>(sx), h = static_cast<std::size_t>(halo);
  const std::size_t px = nx + 2 * h, py = static_cast<std::size_t>(sy) + 2 * h;
  // The streaming state on the stack (XXH_INLINE_ALL makes it a complete type): this runs
  // once per grid row on the read and write paths, so no allocation per call.
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  for (std::size_t z = 0; z < static_cast<std::size_t>(sz); ++z)
    for (std::size_t y = 0; y < static_cast<std::size_t>(sy); ++y) {
      const Mem* src = array + ((z + h) * py + y + h) * px + h;
      if constexpr (std::is_same_v<Stored, Mem>) {
        XXH3_64bits_update(&state, src, nx * sizeof(Stored));
      } else {
        Stored converted[256];  // a stack buffer, see above
        for (std::size_t x0 = 0; x0 < nx; x0 += 256) {
          const std::size_t n = nx - x0 < 256 ? nx - x0 : 256;
          for (std::size_t x = 0; x < n; ++x) converted[x] = static_cast<Stored>(src[x0 + x]);
          XXH3_64bits_update(&state, converted, n * sizeof(Stored));
        }
      }
    }
  return XXH3_64bits_digest(&state);
}

template std::uint64_t hash_interior<double, double>(const double*, int, int, int, int);
template std::uint64_t hash_interior<float, double>(const double*, int, int, int, int);
template std::uint64_t hash_interior<std::uint8_t, std::uint8_t>(const std::uint8_t*, int, int, int, int);

}  // namespace rwd::kernel::detail::REWIND_XXH3_ISA
