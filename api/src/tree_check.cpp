// The tree check (tree_check.hpp): the boxes on their level's grid, then one exchange that
// brings every grid and every parent-child pair to the rank owning the uid's hash.
#include "tree_check.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace rwd::api {

namespace k = rwd::kernel;

namespace {

struct Entry {  // one grid, sent to its own uid's owner (self) or to its parent's (child)
  std::uint64_t uid = 0;
  std::uint64_t parent = 0;
  std::int32_t level = 0;
  std::int32_t child = 0;  // 1: "here is a child of `parent`"; 0: "here is grid `uid`"
  std::int32_t rank = 0;   // who described it
  std::int32_t pad = 0;
  k::BoxRow box{};
};

int owner_of(std::uint64_t uid, int size) {
  std::uint64_t h = uid * 0x9E3779B97F4A7C15ULL;  // spreads consecutive uids over the ranks
  h ^= h >> 32;
  return static_cast<int>(h % static_cast<std::uint64_t>(size));
}

std::string box_text(const k::BoxRow& b, int dim) {
  std::string s = fmt::format("[{}, {}] x [{}, {}]", b[0], b[1], b[2], b[3]);
  return dim == 3 ? s + fmt::format(" x [{}, {}]", b[4], b[5]) : s;
}

// This rank's grids against the level's grid: size, lines, domain.
std::string box_problem(const k::CommonInfo& c, const k::GridRecord& g, int rank) {
  const char* axis = "xyz";
  for (int a = 0; a < c.dim; ++a) {
    const auto lo = static_cast<std::size_t>(2 * a), hi = lo + 1;
    const double size = (c.domain[hi] - c.domain[lo]) / std::pow(static_cast<double>(c.refinement), g.level);
    const double tol = 1e-6 * size;
    const double width = g.bbox[hi] - g.bbox[lo];
    if (!(std::abs(width - size) <= tol))
      return fmt::format(
          "grid {} (rank {}, level {}): its box {} is {} wide along {}; a level-{} grid is {} wide "
          "(the domain / refinement^level)",
          g.uid, rank, g.level, box_text(g.bbox, c.dim), width, axis[a], g.level, size);
    const double at = (g.bbox[lo] - c.domain[lo]) / size;
    if (!(std::abs(at - std::round(at)) <= 1e-6) || g.bbox[lo] < c.domain[lo] - tol || g.bbox[hi] > c.domain[hi] + tol)
      return fmt::format(
          "grid {} (rank {}, level {}): its box {} is not on the level's grid lines inside the domain {}", g.uid, rank,
          g.level, box_text(g.bbox, c.dim), box_text(c.domain, c.dim));
  }
  return {};
}

// Every rank's entries to their owners (one all-to-all of counts, one of bytes).
std::vector<Entry> to_owners(MPI_Comm comm, const std::vector<std::vector<Entry>>& out) {
  const auto size = out.size();
  std::vector<int> send_n(size), recv_n(size), send_d(size), recv_d(size);
  std::vector<Entry> send;
  for (std::size_t q = 0; q < size; ++q) {
    send_d[q] = static_cast<int>(send.size() * sizeof(Entry));
    send_n[q] = static_cast<int>(out[q].size() * sizeof(Entry));
    send.insert(send.end(), out[q].begin(), out[q].end());
  }
  MPI_Alltoall(send_n.data(), 1, MPI_INT, recv_n.data(), 1, MPI_INT, comm);
  std::size_t total = 0;
  for (std::size_t q = 0; q < size; ++q)
    recv_d[q] = static_cast<int>(total), total += static_cast<std::size_t>(recv_n[q]);
  std::vector<Entry> in(total / sizeof(Entry));
  MPI_Alltoallv(send.data(), send_n.data(), send_d.data(), MPI_BYTE, in.data(), recv_n.data(), recv_d.data(), MPI_BYTE,
                comm);
  return in;
}

// At the owner: uids unique; each child's parent exists, one level up, around it.
std::string pair_problem(const std::vector<Entry>& in, int dim) {
  std::unordered_map<std::uint64_t, const Entry*> grid;
  grid.reserve(in.size());
  for (const auto& e : in) {
    if (e.child != 0) continue;
    const auto [it, fresh] = grid.emplace(e.uid, &e);
    if (!fresh)
      return fmt::format("uid {} is described twice (by rank {} and by rank {}): a uid names one grid", e.uid,
                         it->second->rank, e.rank);
  }
  for (const auto& e : in) {
    if (e.child == 0) continue;
    const auto it = grid.find(e.parent);
    if (it == grid.end())
      return fmt::format("grid {} (rank {}): its parent {} is not described on any rank", e.uid, e.rank, e.parent);
    const Entry& p = *it->second;
    if (e.level != p.level + 1)
      return fmt::format(
          "grid {} (rank {}) is on level {}, its parent {} on level {}: a child is one level below its parent", e.uid,
          e.rank, e.level, p.uid, p.level);
    for (std::size_t a = 0; a < static_cast<std::size_t>(dim); ++a) {
      const double tol = 1e-6 * (e.box[2 * a + 1] - e.box[2 * a]);
      if (e.box[2 * a] < p.box[2 * a] - tol || e.box[2 * a + 1] > p.box[2 * a + 1] + tol)
        return fmt::format("grid {} (rank {}): its box {} is not inside its parent {}'s {}", e.uid, e.rank,
                           box_text(e.box, dim), p.uid, box_text(p.box, dim));
    }
  }
  return {};
}

}  // namespace

std::string tree_problem(MPI_Comm comm, const k::CommonInfo& common, const std::vector<k::GridRecord>& grids) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string local;
  std::vector<std::vector<Entry>> out(static_cast<std::size_t>(size));
  if (2 * grids.size() * sizeof(Entry) > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    local = fmt::format("rank {}: {} grids are too many to check on one rank (2 GiB of entries)", rank, grids.size());
  for (const auto& g : grids) {
    if (!local.empty()) break;
    if (local.empty()) local = box_problem(common, g, rank);
    Entry e{g.uid, g.parent_uid, g.level, 0, rank, 0, g.bbox};
    out[static_cast<std::size_t>(owner_of(g.uid, size))].push_back(e);
    if (g.parent_uid == k::kNoUid) continue;
    e.child = 1;
    out[static_cast<std::size_t>(owner_of(g.parent_uid, size))].push_back(e);
  }
  const std::string paired = pair_problem(to_owners(comm, out), common.dim);
  return local.empty() ? paired : local;
}

}  // namespace rwd::api
