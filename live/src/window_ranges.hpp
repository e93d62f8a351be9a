// A live window's colour ranges (messages.hpp, Reply::ranges; collector protocol 1.13):
// each variable's minimum and maximum over the non-solid cells of the grids it shows, as
// their statistics rows in a file would say. Private to rewind::live.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "rewind/kernel/grids.hpp"

namespace rwd::live {

/// Which state a rank's kept ranges were taken from: a future (its file), step and time.
struct StateKey {
  std::string file;
  std::int64_t step = -1;
  double time = 0.0;
  bool operator==(const StateKey&) const = default;
};

/// Each grid's range (kernel::grid_range) per variable slot, kept while the state is the
/// one they were taken from (a paused run's windows pay the pass once).
struct KeptRanges {
  StateKey state;
  std::map<int, std::unordered_map<std::uint64_t, std::array<double, 2>>> by_slot;
};

/// {min, max} of each variable slot of `vars` over the non-solid cells of this rank's grids
/// `shown` (indices in `grids.grids`, repeats allowed; whole grids, even where a window
/// crops them), reduced onto rank 0 of `comm`: 2 numbers per variable there, NaN where no
/// shown grid has a non-solid cell; empty on the other ranks. Collective over `comm`.
std::vector<double> window_ranges(KeptRanges& kept, std::vector<std::size_t> shown, const kernel::LocalGrids& grids,
                                  const std::vector<int>& vars, const StateKey& state, MPI_Comm comm);

}  // namespace rwd::live
