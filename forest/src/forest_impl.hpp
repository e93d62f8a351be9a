// Private: the state behind rwd::forest::Forest — the exchange schedules built once
// by the constructor (exchange_schedule.cpp) and the message rounds every exchange
// runs (forest.cpp).
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rewind/mpi/comm.hpp"
#include "rewind/forest/forest.hpp"

namespace rwd::forest {

// The tree's vocabulary, used throughout the forest's sources.
using namespace rwd::spacetree;  // NOLINT(google-build-using-namespace)

namespace detail {

/// Half-open box of local cell indices, halo included (each index in -1 .. s).
struct Region {
  Int3 lo{0, 0, 0};
  Int3 hi{0, 0, 0};
  [[nodiscard]] std::int64_t extent(int a) const { return hi[a] - lo[a]; }
  [[nodiscard]] std::int64_t cells() const { return extent(0) * extent(1) * extent(2); }
};

/// Maps fine cell indices of a destination region to cells of a coarser grid along
/// one axis: fine global index G = fine_base + i, coarse global index Gc = G / q,
/// coarse local index Gc - coarse_base. coarse_n (cells of the coarse level along
/// the axis) and periodic decide whether Gc-1 and Gc+1 exist for the slope.
struct AxisMap {
  std::int64_t fine_base = 0, q = 1, coarse_base = 0, coarse_n = 1;
  bool periodic = false;
};

enum SlopeSides : std::uint8_t { kNone = 0, kLo = 1, kHi = 2, kBoth = 3 };

/// Per-axis table of one interpolation: coarse index, offset of the fine centre from
/// the coarse centre in coarse-cell units, and which coarse neighbours exist.
struct AxisTable {
  std::vector<std::int64_t> ci;
  std::vector<double> off;
  std::vector<std::uint8_t> sides;
  void build(const AxisMap& m, std::int64_t lo, std::int64_t hi) {
    const auto n = static_cast<std::size_t>(hi - lo);
    ci.resize(n);
    off.resize(n);
    sides.resize(n);
    for (std::int64_t i = lo; i < hi; ++i) {
      const auto t = static_cast<std::size_t>(i - lo);
      const std::int64_t g = m.fine_base + i;  // >= 0 by construction
      const std::int64_t gc = g / m.q;
      ci[t] = gc - m.coarse_base;
      off[t] = (static_cast<double>(g - gc * m.q) + 0.5) / static_cast<double>(m.q) - 0.5;
      std::uint8_t s = kNone;
      if (m.periodic || gc > 0) s |= kLo;
      if (m.periodic || gc + 1 < m.coarse_n) s |= kHi;
      sides[t] = s;
    }
  }
};

}  // namespace detail

struct Forest::Impl {
  using Region = detail::Region;
  using AxisMap = detail::AxisMap;
  using AxisTable = detail::AxisTable;

  /// Fill one halo region of a local grid from same-level cells (copy) or from a
  /// covering coarser grid (interpolation). The source is a local grid or a block
  /// of a message from `peer`.
  struct HaloTask {
    std::size_t grid = 0;
    Region dst;
    Region src;             // in the source grid's local indices
    bool interp = false;
    int peer = -1;          // index into LevelSchedule::recv; -1: local source
    std::size_t src_grid = 0;
    std::int64_t offset = 0;  // cells before this block in the peer's message, per variable
    std::array<AxisMap, 3> map{};
  };
  struct SendItem {
    std::size_t grid = 0;
    Region region;
  };
  struct SendPeer {
    int rank = 0;
    std::int64_t cells = 0;  // per variable
    std::vector<SendItem> items;
  };
  struct RecvPeer {
    int rank = 0;
    std::int64_t cells = 0;  // per variable
  };
  struct LevelSchedule {
    std::vector<HaloTask> local;
    std::vector<std::vector<HaloTask>> remote;  // per receive peer, in request order
    std::vector<SendPeer> send;
    std::vector<RecvPeer> recv;
    std::vector<std::pair<std::size_t, std::array<std::int8_t, 3>>> boundary;
    std::int64_t halo_cells = 0;
  };

  // Bottom-up (restrict) and top-down (prolong) between child_level and its parents.
  struct ChildLink {
    std::size_t child = 0;   // local index of the child (sender of restrict / receiver of prolong)
    std::size_t parent = 0;  // local index of the parent
    Int3 pos{};              // child position inside the parent (0 .. r-1)
  };
  struct FamilyPeer {
    int rank = 0;
    std::vector<ChildLink> links;  // child UID order; only the local end's index is valid
    std::int64_t cells = 0;        // per variable
  };
  struct FamilySchedule {
    std::vector<ChildLink> local;             // both ends here
    std::vector<FamilyPeer> to_parent;        // restrict: children here, parent remote
    std::vector<FamilyPeer> from_child;       // restrict: parent here, child remote
    std::vector<FamilyPeer> from_parent;      // prolong: child here, parent remote
    std::vector<FamilyPeer> to_child;         // prolong: parent here, child remote
  };

  mpi::Comm comm;  // private duplicate
  int rank = 0;
  std::unordered_map<Uid, std::size_t> index;
  std::vector<std::vector<std::size_t>> by_level;
  std::vector<LevelSchedule> halo;       // per level
  std::vector<FamilySchedule> family;    // per child level (entry 0 unused)
  Int3 m{1, 1, 1};                       // parent cells per child per axis: s / r

  // Scratch reused across calls.
  std::vector<std::vector<double>> sbuf, rbuf;
  std::vector<MPI_Request> requests;
  std::array<AxisTable, 3> tab;

  /// Collective over `comm`. Fills `halo` and `family` from the plan: the receiving
  /// side of every halo region from the plan's neighbours, the sending side from one
  /// Alltoallv of requests, and the family links (restrict / prolong) from the plan
  /// alone. `index` and `by_level` must be filled first (exchange_schedule.cpp).
  void build_schedules(const LocalPlan& plan, int csize, int crank);
  // Its steps: the receiving side (returns the requests to send each rank), the sending
  // side (one Alltoallv of those), the family links; local_of: a UID's local index.
  std::vector<std::vector<std::int64_t>> build_halo_receives(const LocalPlan& plan, int csize, int crank);
  void build_halo_sends(const std::vector<std::vector<std::int64_t>>& asks, int csize);
  void build_family_schedules(const LocalPlan& plan, int csize, int crank);
  std::size_t local_of(Uid u) const;
  static HaloTask halo_task(const TreeShape& sh, std::size_t g, int L, const Int3& c, const Neighbour& n);

  /// Posts receives, packs and sends, runs `local_work`, waits, then `unpack(peer)`.
  template <typename Pack, typename Local, typename Unpack>
  void round(int tag, const std::vector<int>& recv_ranks, const std::vector<std::int64_t>& recv_doubles,
             const std::vector<int>& send_ranks, const std::vector<std::int64_t>& send_doubles, Pack&& pack,
             Local&& local_work, Unpack&& unpack, ExchangeStats* stats) {
    const std::size_t nr = recv_ranks.size(), ns = send_ranks.size();
    if (rbuf.size() < nr) rbuf.resize(nr);
    if (sbuf.size() < ns) sbuf.resize(ns);
    requests.assign(nr + ns, MPI_REQUEST_NULL);
    for (std::size_t p = 0; p < nr; ++p) {
      rbuf[p].resize(static_cast<std::size_t>(recv_doubles[p]));
      mpi::check(MPI_Irecv(rbuf[p].data(), static_cast<int>(recv_doubles[p]), MPI_DOUBLE, recv_ranks[p], tag, comm,
                          &requests[p]),
                "forest", "MPI_Irecv");
    }
    for (std::size_t p = 0; p < ns; ++p) {
      sbuf[p].resize(static_cast<std::size_t>(send_doubles[p]));
      pack(p, sbuf[p].data());
      mpi::check(MPI_Isend(sbuf[p].data(), static_cast<int>(send_doubles[p]), MPI_DOUBLE, send_ranks[p], tag, comm,
                          &requests[nr + p]),
                "forest", "MPI_Isend");
      if (stats) {
        stats->bytes_sent += send_doubles[p] * static_cast<std::int64_t>(sizeof(double));
        ++stats->messages_sent;
      }
    }
    local_work();
    // Unpack in peer order after all arrived (not in completion order): every cell is
    // written exactly once, so the order cannot change a value; a fixed order keeps
    // runs reproducible to the instruction.
    if (!requests.empty())
      mpi::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "forest", "MPI_Waitall");
    for (std::size_t p = 0; p < nr; ++p) {
      unpack(p, rbuf[p].data());
      if (stats) stats->bytes_received += recv_doubles[p] * static_cast<std::int64_t>(sizeof(double));
    }
  }
};

}  // namespace rwd::forest
