// Parents without arrays: the average of their children, level by level, bottom up,
// with one all-to-all per level (a child's owner sends its coarsened block to its
// parent's owner). See average.hpp.
#include "average.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "agree.hpp"

namespace rwd::api {

namespace k = rwd::kernel;

namespace {

struct Header {  // before each child's coarsened block in a message
  std::uint64_t parent = 0;
  std::uint64_t child = 0;
  double lo[3] = {0, 0, 0};  // the child's lower corner: where it lies in its parent
};

std::array<int, 3> padded_dims(const k::BlockShape& b, int h) { return {b.sx + 2 * h, b.sy + 2 * h, b.sz + 2 * h}; }

// The child's interior, averaged over r blocks, appended to `out` (x fastest).
void coarsen(const double* child, const k::BlockShape& b, int h, const std::array<int, 3>& r, double* out) {
  const auto n = padded_dims(b, h);
  const double inv = 1.0 / (static_cast<double>(r[0]) * r[1] * r[2]);
  const int cx = b.sx / r[0], cy = b.sy / r[1], cz = b.sz / r[2];
  std::vector<double> acc(static_cast<std::size_t>(cx));
  for (int pk = 0; pk < cz; ++pk)
    for (int pj = 0; pj < cy; ++pj) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int kk = pk * r[2]; kk < (pk + 1) * r[2]; ++kk)
        for (int jj = pj * r[1]; jj < (pj + 1) * r[1]; ++jj) {
          const double* row = child + h + static_cast<std::ptrdiff_t>(n[0]) * ((jj + h) + static_cast<std::ptrdiff_t>(n[1]) * (kk + h));
          for (int pi = 0; pi < cx; ++pi, row += r[0])
            for (int i = 0; i < r[0]; ++i) acc[static_cast<std::size_t>(pi)] += row[i];
        }
      for (int pi = 0; pi < cx; ++pi) *out++ = acc[static_cast<std::size_t>(pi)] * inv;
    }
}

std::string validate(const k::LocalGrids& g, const std::vector<int>& slots, const std::array<int, 3>& r) {
  const int s[3] = {g.block.sx, g.block.sy, g.block.sz};
  for (int a = 0; a < 3; ++a)
    if (r[static_cast<std::size_t>(a)] < 1 || s[a] % r[static_cast<std::size_t>(a)] != 0)
      return fmt::format("cells per grid along axis {} ({}) are not divisible by the refinement {}: a parent "
                         "cannot be the average of its children", a, s[a], r[static_cast<std::size_t>(a)]);
  for (const auto& rec : g.grids)
    for (const int slot : slots) {
      if (slot < 0 || static_cast<std::size_t>(slot) >= rec.fields.size())
        return fmt::format("grid {}: no array for variable {}", rec.uid, slot);
      if (rec.child_uids.empty() && rec.fields[static_cast<std::size_t>(slot)] == nullptr)
        return fmt::format("grid {} has no children and no array for variable {}: a leaf carries the solution",
                           rec.uid, slot);
    }
  return {};
}

struct Owner {
  int rank;
  bool wants;  // the grid lacks an array of one of the slots: its children's blocks fill it
};

bool wants_average(const k::GridRecord& rec, const std::vector<int>& slots) {
  return std::any_of(slots.begin(), slots.end(),
                     [&](int slot) { return rec.fields[static_cast<std::size_t>(slot)] == nullptr; });
}

// Who owns each grid of every rank, and whether it wants its children's blocks. Collective.
std::unordered_map<std::uint64_t, Owner> gather_owners(MPI_Comm comm, const k::LocalGrids& g,
                                                       const std::vector<int>& slots) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int mine = static_cast<int>(g.grids.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int q = 0; q < size; ++q) displ[static_cast<std::size_t>(q)] = total, total += counts[static_cast<std::size_t>(q)];
  std::vector<std::uint64_t> uids(static_cast<std::size_t>(mine)), all(static_cast<std::size_t>(total));
  std::vector<std::uint8_t> wants(static_cast<std::size_t>(mine)), all_wants(static_cast<std::size_t>(total));
  for (int i = 0; i < mine; ++i) {
    const auto& rec = g.grids[static_cast<std::size_t>(i)];
    uids[static_cast<std::size_t>(i)] = rec.uid;
    if (wants_average(rec, slots)) wants[static_cast<std::size_t>(i)] = 1;
  }
  MPI_Allgatherv(uids.data(), mine, MPI_UINT64_T, all.data(), counts.data(), displ.data(), MPI_UINT64_T, comm);
  MPI_Allgatherv(wants.data(), mine, MPI_UINT8_T, all_wants.data(), counts.data(), displ.data(), MPI_UINT8_T, comm);
  std::unordered_map<std::uint64_t, Owner> owner;
  owner.reserve(all.size());
  for (int q = 0; q < size; ++q)
    for (int i = displ[static_cast<std::size_t>(q)]; i < displ[static_cast<std::size_t>(q)] + counts[static_cast<std::size_t>(q)]; ++i)
      owner[all[static_cast<std::size_t>(i)]] = {q, all_wants[static_cast<std::size_t>(i)] != 0};
  return owner;
}

// The sizes of one level's messages: a Header and each slot's coarsened block per child.
struct Blocks {
  std::array<int, 3> n;      // padded extent of a grid's arrays
  std::array<int, 3> cells;  // a child's coarsened block
  std::size_t coarse;        // cells of it
  std::size_t message;       // bytes per child
};

// The children on `level` whose parents want them: one message each, to the parent's owner.
std::vector<std::vector<std::byte>> pack_level(const k::LocalGrids& g, const std::vector<int>& slots,
                                               const std::array<int, 3>& r, int level, const Blocks& b,
                                               const std::unordered_map<std::uint64_t, Owner>& owner, int size,
                                               std::string& problem) {
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size));
  for (const auto& rec : g.grids) {
    if (rec.level != level || rec.parent_uid == k::kNoUid) continue;
    const auto it = owner.find(rec.parent_uid);
    if (it == owner.end()) {
      if (problem.empty())
        problem = fmt::format("grid {}: its parent {} is not described on any rank", rec.uid, rec.parent_uid);
      continue;
    }
    if (!it->second.wants) continue;
    auto& buf = out[static_cast<std::size_t>(it->second.rank)];
    const std::size_t at = buf.size();
    buf.resize(at + b.message);
    Header h{rec.parent_uid, rec.uid, {rec.bbox[0], rec.bbox[2], rec.bbox[4]}};
    std::memcpy(buf.data() + at, &h, sizeof h);
    auto* data = reinterpret_cast<double*>(buf.data() + at + sizeof h);
    for (std::size_t v = 0; v < slots.size(); ++v)
      coarsen(rec.fields[static_cast<std::size_t>(slots[v])], g.block, g.halo, r, data + v * b.coarse);
  }
  return out;
}

// Every rank's messages to every other, in one all-to-all: what arrived here. Collective.
std::vector<std::byte> exchange_blocks(MPI_Comm comm, const std::vector<std::vector<std::byte>>& out) {
  const int size = static_cast<int>(out.size());
  std::vector<int> send_n(static_cast<std::size_t>(size)), recv_n(static_cast<std::size_t>(size));
  std::vector<int> send_d(static_cast<std::size_t>(size)), recv_d(static_cast<std::size_t>(size));
  std::vector<std::byte> send, recv;
  for (int q = 0; q < size; ++q) {
    const auto& b = out[static_cast<std::size_t>(q)];
    if (send.size() + b.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::invalid_argument("averaging parents: more than 2 GiB of child blocks for one level on one rank");
    send_d[static_cast<std::size_t>(q)] = static_cast<int>(send.size());
    send_n[static_cast<std::size_t>(q)] = static_cast<int>(b.size());
    send.insert(send.end(), b.begin(), b.end());
  }
  MPI_Alltoall(send_n.data(), 1, MPI_INT, recv_n.data(), 1, MPI_INT, comm);
  int recv_total = 0;
  for (int q = 0; q < size; ++q)
    recv_d[static_cast<std::size_t>(q)] = recv_total, recv_total += recv_n[static_cast<std::size_t>(q)];
  recv.resize(static_cast<std::size_t>(recv_total));
  MPI_Alltoallv(send.data(), send_n.data(), send_d.data(), MPI_BYTE, recv.data(), recv_n.data(), recv_d.data(),
                MPI_BYTE, comm);
  return recv;
}

// Where a child's coarsened block starts in its parent's cells; nullopt if it does not lie on them.
std::optional<std::array<int, 3>> offset_in_parent(const k::LocalGrids& g, const k::BoxRow& pb, const double (&lo)[3],
                                                   const Blocks& b) {
  const std::array<double, 3> plo{pb[0], pb[2], pb[4]};
  const std::array<double, 3> hp{(pb[1] - pb[0]) / g.block.sx, (pb[3] - pb[2]) / g.block.sy,
                                 (pb[5] - pb[4]) / g.block.sz};
  std::array<int, 3> off{};
  bool inside = true;
  for (int a = 0; a < 3; ++a) {
    const double o = (lo[a] - plo[static_cast<std::size_t>(a)]) / hp[static_cast<std::size_t>(a)];
    off[static_cast<std::size_t>(a)] = static_cast<int>(std::lround(o));
    const int s = a == 0 ? g.block.sx : a == 1 ? g.block.sy : g.block.sz;
    if (std::abs(o - off[static_cast<std::size_t>(a)]) > 1e-6 || off[static_cast<std::size_t>(a)] < 0 ||
        off[static_cast<std::size_t>(a)] + b.cells[static_cast<std::size_t>(a)] > s)
      inside = false;
  }
  if (!inside) return std::nullopt;
  return off;
}

// A coarsened block into its place in a parent's padded array.
void place(double* dst, const double* src, const std::array<int, 3>& off, int halo, const Blocks& b) {
  const auto& n = b.n;
  for (int kk = 0; kk < b.cells[2]; ++kk)
    for (int jj = 0; jj < b.cells[1]; ++jj)
      for (int ii = 0; ii < b.cells[0]; ++ii)
        dst[(off[0] + ii + halo) +
            static_cast<std::ptrdiff_t>(n[0]) *
                ((off[1] + jj + halo) + static_cast<std::ptrdiff_t>(n[1]) * (off[2] + kk + halo))] = *src++;
}

}  // namespace

void ParentAverages::check(MPI_Comm comm, const k::LocalGrids& g, const std::vector<int>& slots,
                           const std::array<int, 3>& r) {
  agree_or_throw(comm, validate(g, slots, r));
}

void ParentAverages::fill(MPI_Comm comm, k::LocalGrids& g, const std::vector<int>& slots, const std::array<int, 3>& r) {
  check(comm, g, slots, r);
  int needs_local = 0;
  for (const auto& rec : g.grids)
    if (wants_average(rec, slots)) needs_local = 1;
  int needs = 0;
  MPI_Allreduce(&needs_local, &needs, 1, MPI_INT, MPI_MAX, comm);
  if (needs == 0) return;

  int size = 1;
  MPI_Comm_size(comm, &size);
  const auto owner = gather_owners(comm, g, slots);
  Blocks b;
  b.n = padded_dims(g.block, g.halo);
  b.cells = {g.block.sx / r[0], g.block.sy / r[1], g.block.sz / r[2]};
  b.coarse = static_cast<std::size_t>(b.cells[0]) * static_cast<std::size_t>(b.cells[1]) *
             static_cast<std::size_t>(b.cells[2]);
  b.message = sizeof(Header) + slots.size() * b.coarse * sizeof(double);
  std::unordered_map<std::uint64_t, std::size_t> local;
  const std::vector<std::uint8_t> ours = make_buffers(g, slots, local);  // (grid, slot): a buffer of ours
  std::vector<int> arrived(g.grids.size(), 0);

  int top = 0, max_level = 0;
  for (const auto& rec : g.grids) top = std::max(top, rec.level);
  MPI_Allreduce(&top, &max_level, 1, MPI_INT, MPI_MAX, comm);
  std::string problem;
  for (int level = max_level; level >= 1; --level) {
    const std::vector<std::byte> recv = exchange_blocks(comm, pack_level(g, slots, r, level, b, owner, size, problem));
    // Place each child's block into its parent's buffers (only the missing arrays).
    for (std::size_t at = 0; at + b.message <= recv.size(); at += b.message) {
      Header h;
      std::memcpy(&h, recv.data() + at, sizeof h);
      const auto* data = reinterpret_cast<const double*>(recv.data() + at + sizeof h);
      const auto li = local.find(h.parent);
      if (li == local.end()) continue;  // cannot happen: we own what we were sent
      auto& parent = g.grids[li->second];
      const auto off = offset_in_parent(g, parent.bbox, h.lo, b);
      if (!off) {
        if (problem.empty())
          problem = fmt::format("grid {} does not lie on the cells of its parent {} (bounding boxes)", h.child, h.parent);
        continue;
      }
      ++arrived[li->second];
      for (std::size_t v = 0; v < slots.size(); ++v) {
        // Only the arrays this object owns are written; a parent's own arrays stay as given.
        if (!ours[li->second * slots.size() + v]) continue;
        place(const_cast<double*>(parent.fields[static_cast<std::size_t>(slots[v])]), data + v * b.coarse, *off, g.halo,
              b);
      }
    }
  }
  for (std::size_t i = 0; i < g.grids.size() && problem.empty(); ++i) {
    const auto& rec = g.grids[i];
    const bool wanted = std::any_of(ours.begin() + static_cast<std::ptrdiff_t>(i * slots.size()),
                                    ours.begin() + static_cast<std::ptrdiff_t>((i + 1) * slots.size()),
                                    [](std::uint8_t o) { return o != 0; });
    if (wanted && arrived[i] != static_cast<int>(rec.child_uids.size()))
      problem = fmt::format("grid {}: {} of its {} children arrived to be averaged (is every child described on some rank?)",
                            rec.uid, arrived[i], rec.child_uids.size());
  }
  agree_or_throw(comm, problem);
}

// The wanting grids' buffers (ghosts 0), in place of their missing arrays; `local`: each
// grid's index by UID. Returns, per (grid, slot), whether the array is a buffer of ours.
std::vector<std::uint8_t> ParentAverages::make_buffers(k::LocalGrids& g, const std::vector<int>& slots,
                                                       std::unordered_map<std::uint64_t, std::size_t>& local) {
  const auto n = padded_dims(g.block, g.halo);
  const auto padded = static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(n[2]);
  buffers_.clear();
  std::vector<std::uint8_t> ours(g.grids.size() * slots.size(), 0);
  for (std::size_t i = 0; i < g.grids.size(); ++i) {
    auto& rec = g.grids[i];
    local[rec.uid] = i;
    for (std::size_t v = 0; v < slots.size(); ++v) {
      auto& f = rec.fields[static_cast<std::size_t>(slots[v])];
      if (f != nullptr) continue;
      buffers_.emplace_back(padded, 0.0);
      f = buffers_.back().data();
      ours[i * slots.size() + v] = 1;
    }
  }
  return ours;
}

}  // namespace rwd::api
