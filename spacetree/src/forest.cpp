// The three-phase ghost-layer exchange of rwd::spacetree::Forest.
//
// Everything that can be decided from the plan is decided once, in the constructor:
// which halo region is filled from which source cells, which of those live on other
// ranks, and in which order the cells travel. A call then only packs, sends,
// receives and unpacks along those schedules.
//
// Determinism: every value written by this file is a function of source cells that
// are the same whatever the partition (a restricted parent cell is computed by the
// owner of the child that covers it, an interpolated halo cell by the owner of the
// fine grid from the same coarse cells), evaluated by the same code in the same
// order. Whether those operands arrive from local memory or from a message does not
// change a bit of the result.
#include "rewind/spacetree/forest.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace rwd::spacetree {

namespace {

// Message tags: operation in the high bits, level in the low bits. The Forest talks
// on its own duplicate of the user's communicator, so these never meet user traffic.
constexpr int kTagHalo = 1 << 8;
constexpr int kTagRestrict = 2 << 8;
constexpr int kTagProlong = 3 << 8;

void mpi_check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(std::string("forest: ") + what + " failed: " + std::string(msg, static_cast<std::size_t>(len)));
  }
}

/// Half-open box of local cell indices, halo included (each index in -1 .. s).
struct Region {
  Int3 lo{0, 0, 0};
  Int3 hi{0, 0, 0};
  [[nodiscard]] std::int64_t extent(int a) const { return hi[a] - lo[a]; }
  [[nodiscard]] std::int64_t cells() const { return extent(0) * extent(1) * extent(2); }
};

/// Read-only view of cells stored x fastest with its first cell at `lo`: either a
/// whole d-grid array (lo = -1,-1,-1) or a packed region in a receive buffer.
struct View {
  const double* p = nullptr;
  std::int64_t sy = 0, sz = 0;
  Int3 lo{0, 0, 0};
  [[nodiscard]] double operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return p[(i - lo[0]) + sy * (j - lo[1]) + sz * (k - lo[2])];
  }
};

View packed_view(const double* p, const Region& r) { return {p, r.extent(0), r.extent(0) * r.extent(1), r.lo}; }

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

double slope(double um, double u0, double up, std::uint8_t sides, Interp mode) {
  if (mode == Interp::linear) {
    switch (sides) {
      case kBoth: return 0.5 * (up - um);
      case kHi: return up - u0;
      case kLo: return u0 - um;
      default: return 0.0;
    }
  }
  if (sides != kBoth) return 0.0;  // limited: no one-sided extrapolation at a wall
  const double dl = u0 - um, dr = up - u0;
  if (dl * dr <= 0.0) return 0.0;
  const double mag = std::min({2.0 * std::abs(dl), 2.0 * std::abs(dr), 0.5 * std::abs(dl + dr)});
  return dl > 0.0 ? mag : -mag;
}

/// Fills `dst` (a region of the grid array `out` with strides sy, sz) from the coarse
/// cells in `src`, piecewise constant or linear; assigns or adds.
void interpolate(const View& src, double* out, std::int64_t sy, std::int64_t sz, const Region& dst,
                 const std::array<AxisMap, 3>& map, Interp mode, bool add, std::array<AxisTable, 3>& tab) {
  for (int a = 0; a < 3; ++a) tab[a].build(map[a], dst.lo[a], dst.hi[a]);
  const bool lin = mode != Interp::constant;
  for (std::int64_t k = dst.lo[2]; k < dst.hi[2]; ++k) {
    const auto tk = static_cast<std::size_t>(k - dst.lo[2]);
    const std::int64_t ck = tab[2].ci[tk];
    for (std::int64_t j = dst.lo[1]; j < dst.hi[1]; ++j) {
      const auto tj = static_cast<std::size_t>(j - dst.lo[1]);
      const std::int64_t cj = tab[1].ci[tj];
      double* row = out + (j + 1) * sy + (k + 1) * sz + 1;
      for (std::int64_t i = dst.lo[0]; i < dst.hi[0]; ++i) {
        const auto ti = static_cast<std::size_t>(i - dst.lo[0]);
        const std::int64_t ci = tab[0].ci[ti];
        const double u0 = src(ci, cj, ck);
        double v = u0;
        if (lin) {
          // Fixed order x, y, z: the same operands give the same bits on any rank.
          if (map[0].q > 1)
            v += slope(src(ci - 1, cj, ck), u0, src(ci + 1, cj, ck), tab[0].sides[ti], mode) * tab[0].off[ti];
          if (map[1].q > 1)
            v += slope(src(ci, cj - 1, ck), u0, src(ci, cj + 1, ck), tab[1].sides[tj], mode) * tab[1].off[tj];
          if (map[2].q > 1)
            v += slope(src(ci, cj, ck - 1), u0, src(ci, cj, ck + 1), tab[2].sides[tk], mode) * tab[2].off[tk];
        }
        if (add) row[i] += v;
        else row[i] = v;
      }
    }
  }
}

/// Copies the cells of `src` starting at `from` into region `dst` of a grid array.
void copy_region(const View& src, const Int3& from, double* out, std::int64_t sy, std::int64_t sz, const Region& dst) {
  for (std::int64_t k = dst.lo[2]; k < dst.hi[2]; ++k)
    for (std::int64_t j = dst.lo[1]; j < dst.hi[1]; ++j) {
      double* row = out + (j + 1) * sy + (k + 1) * sz + 1;
      const std::int64_t sj = from[1] + (j - dst.lo[1]), sk = from[2] + (k - dst.lo[2]);
      for (std::int64_t i = dst.lo[0]; i < dst.hi[0]; ++i) row[i] = src(from[0] + (i - dst.lo[0]), sj, sk);
    }
}

/// Appends region `r` of a grid array to `buf` (x fastest).
void pack_region(const double* grid, std::int64_t sy, std::int64_t sz, const Region& r, double*& buf) {
  for (std::int64_t k = r.lo[2]; k < r.hi[2]; ++k)
    for (std::int64_t j = r.lo[1]; j < r.hi[1]; ++j) {
      const double* row = grid + (j + 1) * sy + (k + 1) * sz + 1;
      buf = std::copy(row + r.lo[0], row + r.hi[0], buf);
    }
}

int nonzero_count(const std::array<std::int8_t, 3>& d) { return (d[0] != 0) + (d[1] != 0) + (d[2] != 0); }

}  // namespace

// ---------------------------------------------------------------------------------

struct Forest::Impl {
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

  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate
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

  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }

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
      mpi_check(MPI_Irecv(rbuf[p].data(), static_cast<int>(recv_doubles[p]), MPI_DOUBLE, recv_ranks[p], tag, comm,
                          &requests[p]),
                "MPI_Irecv");
    }
    for (std::size_t p = 0; p < ns; ++p) {
      sbuf[p].resize(static_cast<std::size_t>(send_doubles[p]));
      pack(p, sbuf[p].data());
      mpi_check(MPI_Isend(sbuf[p].data(), static_cast<int>(send_doubles[p]), MPI_DOUBLE, send_ranks[p], tag, comm,
                          &requests[nr + p]),
                "MPI_Isend");
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
      mpi_check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (std::size_t p = 0; p < nr; ++p) {
      unpack(p, rbuf[p].data());
      if (stats) stats->bytes_received += recv_doubles[p] * static_cast<std::int64_t>(sizeof(double));
    }
  }
};

namespace {

/// Halo region of direction d (local indices of the receiving grid) and the matching
/// interior region of a same-level source grid.
Region halo_region(const TreeShape& sh, const std::array<std::int8_t, 3>& d) {
  Region r;
  for (int a = 0; a < 3; ++a) {
    if (d[a] < 0) r.lo[a] = -1, r.hi[a] = 0;
    else if (d[a] > 0) r.lo[a] = sh.s[a], r.hi[a] = sh.s[a] + 1;
    else r.lo[a] = 0, r.hi[a] = sh.s[a];
  }
  return r;
}

Region same_level_source(const TreeShape& sh, const std::array<std::int8_t, 3>& d) {
  Region r;
  for (int a = 0; a < 3; ++a) {
    if (d[a] < 0) r.lo[a] = sh.s[a] - 1, r.hi[a] = sh.s[a];
    else if (d[a] > 0) r.lo[a] = 0, r.hi[a] = 1;
    else r.lo[a] = 0, r.hi[a] = sh.s[a];
  }
  return r;
}

std::int64_t ipow(std::int64_t b, int e) {
  std::int64_t v = 1;
  for (int i = 0; i < e; ++i) v *= b;
  return v;
}

/// The coarse region (ring included where the axis is refined) that `dst` needs.
Region coarse_source(const Region& dst, const std::array<AxisMap, 3>& map, const TreeShape& sh) {
  Region r;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t lo = (map[a].fine_base + dst.lo[a]) / map[a].q - map[a].coarse_base;
    const std::int64_t hi = (map[a].fine_base + dst.hi[a] - 1) / map[a].q - map[a].coarse_base;
    const std::int64_t ring = map[a].q > 1 ? 1 : 0;
    r.lo[a] = lo - ring;
    r.hi[a] = hi + 1 + ring;
    if (r.lo[a] < -1 || r.hi[a] > sh.s[a] + 1)
      throw std::logic_error("forest: coarse source region outside the coarse grid (tree not consistent?)");
  }
  return r;
}

}  // namespace

Forest::Forest(LocalPlan plan, int nvars, MPI_Comm comm)
    : plan_(std::move(plan)), nvars_(nvars), comm_(comm), impl_(new Impl) {
  const TreeShape& sh = plan_.shape;
  // Local consistency checks first; then every rank learns whether all passed, so
  // that nobody throws while the others wait in the schedule exchange below.
  std::string problem;
  int csize = 0, crank = 0;
  MPI_Comm_size(comm, &csize);
  MPI_Comm_rank(comm, &crank);
  if (nvars < 1) problem = "nvars must be >= 1";
  else if (csize != plan_.ranks) problem = "communicator size " + std::to_string(csize) + " != plan.ranks " + std::to_string(plan_.ranks);
  else if (crank != plan_.rank) problem = "communicator rank " + std::to_string(crank) + " != plan.rank " + std::to_string(plan_.rank);
  for (int a = 0; a < 3 && problem.empty(); ++a)
    if (sh.r[a] < 1 || sh.s[a] % sh.r[a] != 0)
      problem = "d-grid size s[" + std::to_string(a) + "] = " + std::to_string(sh.s[a]) +
                " is not a multiple of the refinement factor " + std::to_string(sh.r[a]);
  for (std::size_t g = 0; g < plan_.grids.size() && problem.empty(); ++g)
    if (plan_.grids[g].level() >= plan_.levels) problem = "plan has a grid deeper than plan.levels";
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (!all_ok) {
    delete impl_;
    impl_ = nullptr;
    throw std::invalid_argument("forest: " + (problem.empty() ? std::string("another rank's plan is inconsistent") : problem));
  }

  try {
    Impl& im = *impl_;
    mpi_check(MPI_Comm_dup(comm, &im.comm), "MPI_Comm_dup");
    im.rank = crank;
    for (int a = 0; a < 3; ++a) im.m[a] = sh.s[a] / sh.r[a];
    block_ = static_cast<std::size_t>((sh.s[0] + 2) * std::int64_t{sh.s[1] + 2} * (sh.s[2] + 2));
    storage_.assign(block_ * static_cast<std::size_t>(nvars_) * plan_.grids.size(), 0.0);

    const auto levels = static_cast<std::size_t>(std::max(plan_.levels, 1));
    im.by_level.assign(levels, {});
    for (std::size_t g = 0; g < plan_.grids.size(); ++g) {
      im.index.emplace(plan_.grids[g].uid, g);
      im.by_level[static_cast<std::size_t>(plan_.grids[g].level())].push_back(g);
    }
    im.halo.assign(levels, {});
    im.family.assign(levels, {});

    auto local_of = [&](Uid u) {
      const auto it = im.index.find(u);
      if (it == im.index.end())
        throw std::logic_error("forest: plan names this rank as owner of UID " + std::to_string(u.raw()) +
                               " but does not contain it");
      return it->second;
    };

    // --- Halo schedules, receiving side -------------------------------------------
    // A request asks rank `owner` for `region` of grid `uid`, in the order this rank
    // will read it. Record layout (8 x int64): level, uid, lo[3], hi[3].
    std::vector<std::vector<std::int64_t>> requests(static_cast<std::size_t>(csize));
    std::vector<std::vector<std::int64_t>> level_cells(levels, std::vector<std::int64_t>(static_cast<std::size_t>(csize), 0));
    std::vector<std::vector<int>> peer_of(levels, std::vector<int>(static_cast<std::size_t>(csize), -1));
    for (std::size_t lev = 0; lev < levels; ++lev) {
      auto& ls = im.halo[lev];
      const int L = static_cast<int>(lev);
      const Int3 gpa = sh.grids_per_axis(L);
      for (const std::size_t g : im.by_level[lev]) {
        const GridInfo& gi = plan_.grids[g];
        const Int3 c = gi.uid.coord();
        std::vector<std::pair<std::size_t, std::array<std::int8_t, 3>>> bnd;
        for (const Neighbour& n : gi.neighbours) {
          if (n.relation == Relation::finer) continue;
          if (n.relation == Relation::boundary) {
            bnd.emplace_back(g, n.dir);
            continue;
          }
          Impl::HaloTask t;
          t.grid = g;
          t.dst = halo_region(sh, n.dir);
          if (n.relation == Relation::same) {
            t.src = same_level_source(sh, n.dir);
          } else {  // coarser
            t.interp = true;
            const int Lc = n.uid.level();
            const Int3 cc = n.uid.coord();
            const Int3 gpc = sh.grids_per_axis(Lc);
            for (int a = 0; a < 3; ++a) {
              // Frame of the (absent) same-level neighbour position P, wrapped into the
              // domain on periodic axes: halo index i is fine cell P*s + i - d*s.
              std::int64_t p = c[a] + n.dir[a];
              if (p < 0 || p >= gpa[a]) p = (p + gpa[a]) % gpa[a];
              AxisMap& mp = t.map[a];
              mp.fine_base = (p - n.dir[a]) * sh.s[a];
              mp.q = ipow(sh.r[a], L - Lc);
              mp.coarse_base = cc[a] * sh.s[a];
              mp.coarse_n = gpc[a] * sh.s[a];
              mp.periodic = sh.periodic[a];
            }
            t.src = coarse_source(t.dst, t.map, sh);
          }
          ls.halo_cells += t.dst.cells();
          if (n.owner == crank) {
            t.src_grid = local_of(n.uid);
            ls.local.push_back(t);
          } else {
            if (n.owner < 0 || n.owner >= csize) throw std::logic_error("forest: neighbour owner out of range");
            const auto o = static_cast<std::size_t>(n.owner);
            if (peer_of[lev][o] < 0) {
              peer_of[lev][o] = static_cast<int>(ls.recv.size());
              ls.recv.push_back({n.owner, 0});
              ls.remote.emplace_back();
            }
            t.peer = peer_of[lev][o];
            t.offset = ls.recv[static_cast<std::size_t>(t.peer)].cells;
            ls.recv[static_cast<std::size_t>(t.peer)].cells += t.src.cells();
            auto& rq = requests[o];
            rq.push_back(L);
            rq.push_back(static_cast<std::int64_t>(n.uid.raw()));
            for (int a = 0; a < 3; ++a) rq.push_back(t.src.lo[a]);
            for (int a = 0; a < 3; ++a) rq.push_back(t.src.hi[a]);
            ls.remote[static_cast<std::size_t>(t.peer)].push_back(t);
          }
        }
        std::stable_sort(bnd.begin(), bnd.end(),
                         [](const auto& x, const auto& y) { return nonzero_count(x.second) < nonzero_count(y.second); });
        ls.boundary.insert(ls.boundary.end(), bnd.begin(), bnd.end());
      }
    }

    // --- Halo schedules, sending side: tell every owner what we need, once. --------
    std::vector<int> scount(static_cast<std::size_t>(csize)), rcount(static_cast<std::size_t>(csize));
    for (int p = 0; p < csize; ++p) scount[static_cast<std::size_t>(p)] = static_cast<int>(requests[static_cast<std::size_t>(p)].size());
    mpi_check(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, im.comm), "MPI_Alltoall");
    std::vector<int> sdispl(static_cast<std::size_t>(csize), 0), rdispl(static_cast<std::size_t>(csize), 0);
    for (std::size_t p = 1; p < static_cast<std::size_t>(csize); ++p) {
      sdispl[p] = sdispl[p - 1] + scount[p - 1];
      rdispl[p] = rdispl[p - 1] + rcount[p - 1];
    }
    std::vector<std::int64_t> sflat, rflat(static_cast<std::size_t>(rdispl.back() + rcount.back()));
    for (const auto& rq : requests) sflat.insert(sflat.end(), rq.begin(), rq.end());
    mpi_check(MPI_Alltoallv(sflat.data(), scount.data(), sdispl.data(), MPI_INT64_T, rflat.data(), rcount.data(),
                            rdispl.data(), MPI_INT64_T, im.comm),
              "MPI_Alltoallv");
    std::vector<std::vector<int>> send_peer_of(levels, std::vector<int>(static_cast<std::size_t>(csize), -1));
    for (int p = 0; p < csize; ++p) {
      const auto pu = static_cast<std::size_t>(p);
      for (int r = 0; r < rcount[pu]; r += 8) {
        const std::int64_t* rec = rflat.data() + rdispl[pu] + r;
        const auto lev = static_cast<std::size_t>(rec[0]);
        if (lev >= levels) throw std::logic_error("forest: halo request for a level outside the plan");
        auto& ls = im.halo[lev];
        if (send_peer_of[lev][pu] < 0) {
          send_peer_of[lev][pu] = static_cast<int>(ls.send.size());
          ls.send.push_back({p, 0, {}});
        }
        auto& sp = ls.send[static_cast<std::size_t>(send_peer_of[lev][pu])];
        Impl::SendItem it;
        it.grid = local_of(Uid::from_raw(static_cast<std::uint64_t>(rec[1])));
        for (int a = 0; a < 3; ++a) it.region.lo[a] = rec[2 + a], it.region.hi[a] = rec[5 + a];
        sp.cells += it.region.cells();
        sp.items.push_back(it);
      }
    }

    // --- Family schedules (restrict / prolong), from Family alone: both ends know
    // the other's owner, and both sort by child UID, so no handshake is needed. ---
    for (std::size_t lev = 1; lev < levels; ++lev) {
      auto& fs = im.family[lev];
      auto pos_of = [&](Uid child, Uid parent) {
        const Int3 cc = child.coord(), pc = parent.coord();
        Int3 pos{};
        for (int a = 0; a < 3; ++a) pos[a] = cc[a] - pc[a] * sh.r[a];
        return pos;
      };
      std::vector<std::pair<Uid, std::pair<int, Impl::ChildLink>>> child_side, parent_side;
      for (const std::size_t g : im.by_level[lev]) {  // children here
        const GridInfo& gi = plan_.grids[g];
        Impl::ChildLink l{g, 0, pos_of(gi.uid, gi.family.parent)};
        if (gi.family.parent_owner == crank) {
          l.parent = local_of(gi.family.parent);
          fs.local.push_back(l);
        } else {
          child_side.push_back({gi.uid, {gi.family.parent_owner, l}});
        }
      }
      for (const std::size_t g : im.by_level[lev - 1]) {  // parents here
        const GridInfo& gi = plan_.grids[g];
        for (std::size_t c = 0; c < gi.family.children.size(); ++c) {
          if (gi.family.child_owners[c] == crank) continue;  // handled as `local` above
          Impl::ChildLink l{0, g, pos_of(gi.family.children[c], gi.uid)};
          parent_side.push_back({gi.family.children[c], {gi.family.child_owners[c], l}});
        }
      }
      std::sort(child_side.begin(), child_side.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      std::sort(parent_side.begin(), parent_side.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      auto group = [&](const auto& side, std::vector<Impl::FamilyPeer>& out) {
        std::vector<int> peer(static_cast<std::size_t>(csize), -1);
        for (const auto& [uid, rl] : side) {
          const auto o = static_cast<std::size_t>(rl.first);
          if (peer[o] < 0) {
            peer[o] = static_cast<int>(out.size());
            out.push_back({rl.first, {}, 0});
          }
          out[static_cast<std::size_t>(peer[o])].links.push_back(rl.second);
        }
      };
      group(child_side, fs.to_parent);
      group(child_side, fs.from_parent);
      group(parent_side, fs.from_child);
      group(parent_side, fs.to_child);
      const std::int64_t per_child = im.m[0] * im.m[1] * im.m[2];
      for (auto& p : fs.to_parent) p.cells = per_child * static_cast<std::int64_t>(p.links.size());
      for (auto& p : fs.from_child) p.cells = per_child * static_cast<std::int64_t>(p.links.size());
    }
  } catch (...) {
    delete impl_;
    impl_ = nullptr;
    throw;
  }
}

Forest::Forest(Forest&& o) noexcept
    : plan_(std::move(o.plan_)),
      nvars_(o.nvars_),
      comm_(o.comm_),
      block_(o.block_),
      storage_(std::move(o.storage_)),
      last_bytes_(o.last_bytes_),
      stats_(o.stats_),
      impl_(std::exchange(o.impl_, nullptr)) {}

Forest& Forest::operator=(Forest&& o) noexcept {
  if (this != &o) {
    delete impl_;
    plan_ = std::move(o.plan_);
    nvars_ = o.nvars_;
    comm_ = o.comm_;
    block_ = o.block_;
    storage_ = std::move(o.storage_);
    last_bytes_ = o.last_bytes_;
    stats_ = o.stats_;
    impl_ = std::exchange(o.impl_, nullptr);
  }
  return *this;
}

Forest::~Forest() { delete impl_; }

std::ptrdiff_t Forest::local_index(Uid uid) const {
  const auto it = impl_->index.find(uid);
  return it == impl_->index.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
}

std::span<const std::size_t> Forest::grids_on_level(int level) const {
  if (level < 0 || static_cast<std::size_t>(level) >= impl_->by_level.size()) return {};
  return impl_->by_level[static_cast<std::size_t>(level)];
}

namespace {
void check_vars(std::span<const int> vars, int nvars) {
  for (const int v : vars)
    if (v < 0 || v >= nvars)
      throw std::invalid_argument("forest: variable " + std::to_string(v) + " outside 0.." + std::to_string(nvars - 1));
}
}  // namespace

// ---------------------------------------------------------------------------------
// Bottom-up

void Forest::restrict_levels(std::span<const int> vars, int to_level) {
  for (int l = plan_.levels - 1; l > std::max(to_level, 0); --l) restrict_level(vars, l);
}

void Forest::restrict_level(std::span<const int> vars, int child_level) {
  check_vars(vars, nvars_);
  if (child_level < 1 || child_level >= plan_.levels) return;
  Impl& im = *impl_;
  const auto& fs = im.family[static_cast<std::size_t>(child_level)];
  const TreeShape& sh = shape();
  const auto nv = static_cast<std::int64_t>(vars.size());
  const Int3 m = im.m;
  const std::int64_t per_child = m[0] * m[1] * m[2];
  const double inv = 1.0 / static_cast<double>(sh.r[0] * sh.r[1] * sh.r[2]);  // a power of two: exact
  const std::int64_t sy = stride_y(), sz = stride_z();

  // The average of the r0*r1*r2 child cells under each parent cell, summed in fixed
  // (k, j, i) order, written to `out` with strides (1, oy, oz).
  auto average = [&](const double* child, double* out, std::int64_t oy, std::int64_t oz) {
    for (std::int64_t pk = 0; pk < m[2]; ++pk)
      for (std::int64_t pj = 0; pj < m[1]; ++pj)
        for (std::int64_t pi = 0; pi < m[0]; ++pi) {
          double sum = 0.0;
          for (std::int64_t k = pk * sh.r[2]; k < (pk + 1) * sh.r[2]; ++k)
            for (std::int64_t j = pj * sh.r[1]; j < (pj + 1) * sh.r[1]; ++j)
              for (std::int64_t i = pi * sh.r[0]; i < (pi + 1) * sh.r[0]; ++i) sum += child[index(i, j, k)];
          out[pi + oy * pj + oz * pk] = sum * inv;
        }
  };
  auto parent_block = [&](std::size_t parent, int var, const Int3& pos) {
    return data(parent, var) + index(pos[0] * m[0], pos[1] * m[1], pos[2] * m[2]);
  };

  std::vector<int> rr, sr;
  std::vector<std::int64_t> rd, sd;
  for (const auto& p : fs.from_child) rr.push_back(p.rank), rd.push_back(p.cells * nv);
  for (const auto& p : fs.to_parent) sr.push_back(p.rank), sd.push_back(per_child * nv * static_cast<std::int64_t>(p.links.size()));
  im.round(
      kTagRestrict + child_level, rr, rd, sr, sd,
      [&](std::size_t p, double* buf) {
        for (const auto& l : fs.to_parent[p].links)
          for (const int v : vars) {
            average(data(l.child, v), buf, m[0], m[0] * m[1]);
            buf += per_child;
          }
      },
      [&] {
        for (const auto& l : fs.local)
          for (const int v : vars) average(data(l.child, v), parent_block(l.parent, v, l.pos), sy, sz);
      },
      [&](std::size_t p, const double* buf) {
        for (const auto& l : fs.from_child[p].links)
          for (const int v : vars) {
            double* out = parent_block(l.parent, v, l.pos);
            for (std::int64_t k = 0; k < m[2]; ++k)
              for (std::int64_t j = 0; j < m[1]; ++j)
                for (std::int64_t i = 0; i < m[0]; ++i) out[i + sy * j + sz * k] = *buf++;
          }
      },
      nullptr);
}

// ---------------------------------------------------------------------------------
// Top-down for multigrid

void Forest::prolong_level(std::span<const int> vars, int child_level, ProlongMode mode, Interp interp) {
  check_vars(vars, nvars_);
  if (child_level < 1 || child_level >= plan_.levels) return;
  Impl& im = *impl_;
  const auto& fs = im.family[static_cast<std::size_t>(child_level)];
  const TreeShape& sh = shape();
  const auto nv = static_cast<std::int64_t>(vars.size());
  const std::int64_t sy = stride_y(), sz = stride_z();
  const bool add = mode == ProlongMode::add;
  const Int3 gpp = sh.grids_per_axis(child_level - 1);

  // The parent cells (ring included on refined axes) under child position `pos`,
  // and the index maps from child cells to them.
  auto source = [&](const Int3& pos) {
    Region r;
    for (int a = 0; a < 3; ++a) {
      const std::int64_t ring = sh.r[a] > 1 ? 1 : 0;
      r.lo[a] = pos[a] * im.m[a] - ring;
      r.hi[a] = (pos[a] + 1) * im.m[a] + ring;
    }
    return r;
  };
  Region interior;
  for (int a = 0; a < 3; ++a) interior.lo[a] = 0, interior.hi[a] = sh.s[a];
  auto maps = [&](std::size_t child, const Int3& pos) {
    std::array<AxisMap, 3> mp{};
    const Int3 cc = plan_.grids[child].uid.coord();
    for (int a = 0; a < 3; ++a) {
      mp[a].fine_base = cc[a] * sh.s[a];
      mp[a].q = sh.r[a];
      mp[a].coarse_base = (cc[a] - pos[a]) / sh.r[a] * sh.s[a];
      mp[a].coarse_n = gpp[a] * sh.s[a];
      mp[a].periodic = sh.periodic[a];
    }
    return mp;
  };

  std::vector<int> rr, sr;
  std::vector<std::int64_t> rd, sd;
  for (const auto& p : fs.from_parent) {
    std::int64_t cells = 0;
    for (const auto& l : p.links) cells += source(l.pos).cells();
    rr.push_back(p.rank), rd.push_back(cells * nv);
  }
  for (const auto& p : fs.to_child) {
    std::int64_t cells = 0;
    for (const auto& l : p.links) cells += source(l.pos).cells();
    sr.push_back(p.rank), sd.push_back(cells * nv);
  }
  im.round(
      kTagProlong + child_level, rr, rd, sr, sd,
      [&](std::size_t p, double* buf) {
        for (const auto& l : fs.to_child[p].links)
          for (const int v : vars) pack_region(data(l.parent, v), sy, sz, source(l.pos), buf);
      },
      [&] {
        for (const auto& l : fs.local)
          for (const int v : vars)
            interpolate(View{data(l.parent, v), sy, sz, {-1, -1, -1}}, data(l.child, v), sy, sz, interior,
                        maps(l.child, l.pos), interp, add, im.tab);
      },
      [&](std::size_t p, const double* buf) {
        for (const auto& l : fs.from_parent[p].links) {
          const Region src = source(l.pos);
          for (const int v : vars) {
            interpolate(packed_view(buf, src), data(l.child, v), sy, sz, interior, maps(l.child, l.pos), interp, add,
                        im.tab);
            buf += src.cells();
          }
        }
      },
      nullptr);
}

// ---------------------------------------------------------------------------------
// Horizontal + top-down halo fill

void Forest::exchange_halos(std::span<const int> vars, int level, Interp interp, const BoundaryFill& boundary) {
  check_vars(vars, nvars_);
  Impl& im = *impl_;
  stats_ = {};
  const int first = level < 0 ? 0 : level;
  const int last = level < 0 ? plan_.levels - 1 : std::min(level, plan_.levels - 1);
  const auto nv = static_cast<std::int64_t>(vars.size());
  const std::int64_t sy = stride_y(), sz = stride_z();
  const bool flat_z = shape().dim() == 2;

  auto run = [&](const Impl::HaloTask& t, const View& src, int var) {
    double* out = data(t.grid, var);
    if (t.interp) interpolate(src, out, sy, sz, t.dst, t.map, interp, false, im.tab);
    else copy_region(src, t.src.lo, out, sy, sz, t.dst);
  };

  for (int L = first; L <= last; ++L) {
    const auto& ls = im.halo[static_cast<std::size_t>(L)];
    std::vector<int> rr, sr;
    std::vector<std::int64_t> rd, sd;
    for (const auto& p : ls.recv) rr.push_back(p.rank), rd.push_back(p.cells * nv);
    for (const auto& p : ls.send) sr.push_back(p.rank), sd.push_back(p.cells * nv);
    im.round(
        kTagHalo + L, rr, rd, sr, sd,
        [&](std::size_t p, double* buf) {
          // Layout: per request, per variable, the region x fastest.
          for (const auto& it : ls.send[p].items)
            for (const int v : vars) pack_region(data(it.grid, v), sy, sz, it.region, buf);
        },
        [&] {
          for (const auto& t : ls.local)
            for (const int v : vars) run(t, View{data(t.src_grid, v), sy, sz, {-1, -1, -1}}, v);
        },
        [&](std::size_t p, const double* buf) {
          for (const auto& t : ls.remote[p]) {
            const double* base = buf + t.offset * nv;
            const std::int64_t cells = t.src.cells();
            for (std::size_t vi = 0; vi < vars.size(); ++vi)
              run(t, packed_view(base + static_cast<std::int64_t>(vi) * cells, t.src), vars[vi]);
          }
        },
        &stats_);
    stats_.halo_bytes += ls.halo_cells * nv * static_cast<std::int64_t>(sizeof(double));

    if (boundary)
      for (const auto& [g, d] : ls.boundary)
        for (const int v : vars) boundary(g, d, v);

    if (flat_z) {
      // 2-D: the z-halo layers mirror the single interior layer, halo rows included.
      const std::int64_t plane = sz;
      for (const std::size_t g : im.by_level[static_cast<std::size_t>(L)])
        for (const int v : vars) {
          double* p = data(g, v);
          std::copy(p + plane, p + 2 * plane, p);
          std::copy(p + plane, p + 2 * plane, p + 2 * plane);
        }
    }
  }
  last_bytes_ = stats_.bytes_sent;
}

void Forest::communicate(std::span<const int> vars, Interp interp, const BoundaryFill& boundary) {
  restrict_levels(vars, 0);
  exchange_halos(vars, -1, interp, boundary);
}

}  // namespace rwd::spacetree
