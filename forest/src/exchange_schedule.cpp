// The exchange schedules of rwd::forest::Forest, built once by its constructor:
// which halo region is filled from which source cells, which of those live on other
// ranks, and in which order the cells travel; and the family links the bottom-up and
// top-down phases use. The exchanges themselves (forest.cpp) only follow them.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "forest_impl.hpp"

namespace rwd::forest {

using detail::AxisMap;
using detail::Region;

namespace {

int nonzero_count(const std::array<std::int8_t, 3>& d) { return (d[0] != 0) + (d[1] != 0) + (d[2] != 0); }

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

void Forest::Impl::build_schedules(const LocalPlan& plan, int csize, int crank) {
  build_halo_sends(build_halo_receives(plan, csize, crank), csize);
  build_family_schedules(plan, csize, crank);
}

// The task filling the halo region of local grid `g` (on level L, at grid coordinates
// `c`) that faces neighbour `n`, a same-level or a coarser grid: its regions, and for a
// coarser one the axis maps of the interpolation.
Forest::Impl::HaloTask Forest::Impl::halo_task(const TreeShape& sh, std::size_t g, int L, const Int3& c,
                                               const Neighbour& n) {
  HaloTask t;
  t.grid = g;
  t.dst = halo_region(sh, n.dir);
  if (n.relation == Relation::same) {
    t.src = same_level_source(sh, n.dir);
    return t;
  }
  t.interp = true;  // coarser
  const int Lc = n.uid.level();
  const Int3 cc = n.uid.coord();
  const Int3 gpc = sh.grids_per_axis(Lc);
  const Int3 gpa = sh.grids_per_axis(L);
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
  return t;
}

std::size_t Forest::Impl::local_of(Uid u) const {
  const auto it = index.find(u);
  if (it == index.end())
    throw std::logic_error("forest: plan names this rank as owner of UID " + std::to_string(u.raw()) +
                           " but does not contain it");
  return it->second;
}

// A request (an "ask") asks rank `owner` for `region` of grid `uid`, in the order this rank
// will read it. Record layout (8 x int64): level, uid, lo[3], hi[3].
std::vector<std::vector<std::int64_t>> Forest::Impl::build_halo_receives(const LocalPlan& plan, int csize, int crank) {
  const TreeShape& sh = plan.shape;
  const std::size_t levels = halo.size();
  std::vector<std::vector<std::int64_t>> asks(static_cast<std::size_t>(csize));
  std::vector<std::vector<int>> peer_of(levels, std::vector<int>(static_cast<std::size_t>(csize), -1));
  for (std::size_t lev = 0; lev < levels; ++lev) {
    auto& ls = halo[lev];
    const int L = static_cast<int>(lev);
    for (const std::size_t g : by_level[lev]) {
      const GridInfo& gi = plan.grids[g];
      const Int3 c = gi.uid.coord();
      std::vector<std::pair<std::size_t, std::array<std::int8_t, 3>>> bnd;
      for (const Neighbour& n : gi.neighbours) {
        if (n.relation == Relation::finer) continue;
        if (n.relation == Relation::boundary) {
          bnd.emplace_back(g, n.dir);
          continue;
        }
        HaloTask t = halo_task(sh, g, L, c, n);
        ls.halo_cells += t.dst.cells();
        if (n.owner == crank) {
          t.src_grid = local_of(n.uid);
          ls.local.push_back(t);
          continue;
        }
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
        auto& rq = asks[o];
        rq.push_back(L);
        rq.push_back(static_cast<std::int64_t>(n.uid.raw()));
        for (int a = 0; a < 3; ++a) rq.push_back(t.src.lo[a]);
        for (int a = 0; a < 3; ++a) rq.push_back(t.src.hi[a]);
        ls.remote[static_cast<std::size_t>(t.peer)].push_back(t);
      }
      std::stable_sort(bnd.begin(), bnd.end(),
                       [](const auto& x, const auto& y) { return nonzero_count(x.second) < nonzero_count(y.second); });
      ls.boundary.insert(ls.boundary.end(), bnd.begin(), bnd.end());
    }
  }
  return asks;
}

// The sending side: every owner is told what we need, once (one Alltoallv of the asks).
void Forest::Impl::build_halo_sends(const std::vector<std::vector<std::int64_t>>& asks, int csize) {
  const std::size_t levels = halo.size();
  std::vector<int> scount(static_cast<std::size_t>(csize)), rcount(static_cast<std::size_t>(csize));
  for (int p = 0; p < csize; ++p) scount[static_cast<std::size_t>(p)] = static_cast<int>(asks[static_cast<std::size_t>(p)].size());
  mpi::check(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm), "forest", "MPI_Alltoall");
  std::vector<int> sdispl(static_cast<std::size_t>(csize), 0), rdispl(static_cast<std::size_t>(csize), 0);
  for (std::size_t p = 1; p < static_cast<std::size_t>(csize); ++p) {
    sdispl[p] = sdispl[p - 1] + scount[p - 1];
    rdispl[p] = rdispl[p - 1] + rcount[p - 1];
  }
  std::vector<std::int64_t> sflat, rflat(static_cast<std::size_t>(rdispl.back() + rcount.back()));
  for (const auto& rq : asks) sflat.insert(sflat.end(), rq.begin(), rq.end());
  mpi::check(MPI_Alltoallv(sflat.data(), scount.data(), sdispl.data(), MPI_INT64_T, rflat.data(), rcount.data(),
                           rdispl.data(), MPI_INT64_T, comm),
             "forest", "MPI_Alltoallv");
  std::vector<std::vector<int>> send_peer_of(levels, std::vector<int>(static_cast<std::size_t>(csize), -1));
  for (int p = 0; p < csize; ++p) {
    const auto pu = static_cast<std::size_t>(p);
    for (int r = 0; r < rcount[pu]; r += 8) {
      const std::int64_t* rec = rflat.data() + rdispl[pu] + r;
      const auto lev = static_cast<std::size_t>(rec[0]);
      if (lev >= levels) throw std::logic_error("forest: halo request for a level outside the plan");
      auto& ls = halo[lev];
      if (send_peer_of[lev][pu] < 0) {
        send_peer_of[lev][pu] = static_cast<int>(ls.send.size());
        ls.send.push_back({p, 0, {}});
      }
      auto& sp = ls.send[static_cast<std::size_t>(send_peer_of[lev][pu])];
      SendItem it;
      it.grid = local_of(Uid::from_raw(static_cast<std::uint64_t>(rec[1])));
      for (int a = 0; a < 3; ++a) it.region.lo[a] = rec[2 + a], it.region.hi[a] = rec[5 + a];
      sp.cells += it.region.cells();
      sp.items.push_back(it);
    }
  }
}

// Family schedules (restrict / prolong), from Family alone: both ends know the other's
// owner, and both sort by child UID, so no handshake is needed.
void Forest::Impl::build_family_schedules(const LocalPlan& plan, int csize, int crank) {
  const TreeShape& sh = plan.shape;
  auto pos_of = [&](Uid child, Uid parent) {
    const Int3 cc = child.coord(), pc = parent.coord();
    Int3 pos{};
    for (int a = 0; a < 3; ++a) pos[a] = cc[a] - pc[a] * sh.r[a];
    return pos;
  };
  // Family links grouped by the rank at their other end, in the order of `side`.
  auto group = [&](const auto& side, std::vector<FamilyPeer>& out) {
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
  for (std::size_t lev = 1; lev < halo.size(); ++lev) {
    auto& fs = family[lev];
    std::vector<std::pair<Uid, std::pair<int, ChildLink>>> child_side, parent_side;
    for (const std::size_t g : by_level[lev]) {  // children here
      const GridInfo& gi = plan.grids[g];
      ChildLink l{g, 0, pos_of(gi.uid, gi.family.parent)};
      if (gi.family.parent_owner == crank) {
        l.parent = local_of(gi.family.parent);
        fs.local.push_back(l);
      } else {
        child_side.push_back({gi.uid, {gi.family.parent_owner, l}});
      }
    }
    for (const std::size_t g : by_level[lev - 1]) {  // parents here
      const GridInfo& gi = plan.grids[g];
      for (std::size_t c = 0; c < gi.family.children.size(); ++c) {
        if (gi.family.child_owners[c] == crank) continue;  // handled as `local` above
        ChildLink l{0, g, pos_of(gi.family.children[c], gi.uid)};
        parent_side.push_back({gi.family.children[c], {gi.family.child_owners[c], l}});
      }
    }
    std::sort(child_side.begin(), child_side.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::sort(parent_side.begin(), parent_side.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    group(child_side, fs.to_parent);
    group(child_side, fs.from_parent);
    group(parent_side, fs.from_child);
    group(parent_side, fs.to_child);
    const std::int64_t per_child = m[0] * m[1] * m[2];
    for (auto& p : fs.to_parent) p.cells = per_child * static_cast<std::int64_t>(p.links.size());
    for (auto& p : fs.from_child) p.cells = per_child * static_cast<std::int64_t>(p.links.size());
  }
}

}  // namespace rwd::forest
