// The per-grid statistics of a step's fields (statistics.hpp).
#include "write/statistics.hpp"

#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "rewind/kernel/grid_statistics.hpp"
#include "write/write_step.hpp"

namespace rwd::kernel::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint8_t kSolid = 1;  ///< cell_type of a solid cell (docs/file-format.md §3)
constexpr std::size_t kHeader = 5;  ///< a remote child's message: parent row, child row, its box's lower corner

KeptDoubles kept_send, kept_recv;  ///< the statistics' messages, sent and received

}  // namespace

std::vector<double> KeptDoubles::take(std::size_t n) {
  std::vector<double> v;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    v.swap(kept_);
  }
  if (v.size() < n) v.resize(n);
  return v;
}

void KeptDoubles::give(std::vector<double> v) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (v.size() > kept_.size()) kept_.swap(v);
}

void KeptDoubles::release() {
  std::vector<double> gone;
  std::lock_guard<std::mutex> lock(mutex_);
  gone.swap(kept_);
}

void release_kept_statistics_memory() {
  kept_send.release();
  kept_recv.release();
}

Refinement refinement_of(const BlockShape& block, int max_children) {
  Refinement r;
  const int axes = max_children == 2 ? 1 : max_children == 4 ? 2 : max_children == 8 ? 3 : 0;
  const std::array<int, 3> s{block.sx, block.sy, block.sz};
  r.ok = axes > 0;
  r.shares = r.ok;
  for (int a = 0; a < axes; ++a) {
    r.f[static_cast<std::size_t>(a)] = 2;
    if (s[static_cast<std::size_t>(a)] % 2 != 0) r.ok = false;
    if (s[static_cast<std::size_t>(a)] % 4 != 0) r.shares = false;
  }
  r.shares = r.shares && r.ok;
  return r;
}

/// A grid's values: element (x, y, z) at base + z * sz + y * sy + x.
struct StepStatistics::Layout {
  std::ptrdiff_t base = 0, sy = 0, sz = 0;
};

StepStatistics::StepStatistics(MPI_Comm comm, const BlockShape& block, int max_children,
                               const std::vector<FieldSpec>& specs, const LocalGrids& grids, const StepRows& rows,
                               const std::vector<std::size_t>& fields)
    : comm_(comm), specs_(specs), fields_(fields), grids_(grids), rows_(rows), blk_(block), h_(grids.halo) {
  ref_ = refinement_of(blk_, max_children);
  const std::size_t nloc = rows.perm.size();
  nb_ = {blk_.sx / ref_.f[0], blk_.sy / ref_.f[1], blk_.sz / ref_.f[2]};
  nblocks_ = static_cast<std::size_t>(nb_[0]) * static_cast<std::size_t>(nb_[1]) * static_cast<std::size_t>(nb_[2]);
  nc_ = ref_.ok ? static_cast<std::size_t>(max_children) : 1;
  for (std::size_t a = 0; a < 3; ++a) half_[a] = ref_.f[a] == 2 ? nb_[a] / 2 : nb_[a];  // unrefined: octant 0
  for (std::size_t k = 0; k < nloc; ++k) local_of_row_.emplace(rows.layout.row_of[k], k);
  local_parent_.assign(nloc, -1);
  remote_rank_.assign(nloc, -1);
  remote_slot_.assign(nloc, -1);
  int comm_size = 1;
  MPI_Comm_size(comm_, &comm_size);
  scount_.assign(static_cast<std::size_t>(comm_size), 0);
  for (std::size_t k = 0; k < nloc; ++k) {
    const std::int64_t p = rows.parent_row[k];
    if (p < 0) continue;
    if (const auto it = local_of_row_.find(p); it != local_of_row_.end()) {
      local_parent_[k] = static_cast<std::int64_t>(it->second);
    } else {
      remote_rank_[k] = rows.parent_rank[k];
      ++scount_[static_cast<std::size_t>(remote_rank_[k])];
      ++n_remote_;
    }
  }
  // The remote children's messages, grouped by the parent's rank, each child's where
  // add() puts its moments: no copy between the pass and the exchange.
  field_at_.assign(specs.size(), 0);
  for (std::size_t j = 0; j < fields_.size(); ++j) field_at_[fields_[j]] = j;
  per_ = ref_.ok ? kHeader + fields_.size() * per_field() : 0;  // no detail: no messages
  std::vector<std::size_t> next(scount_.size(), 0);
  for (std::size_t r = 1; r < scount_.size(); ++r)
    next[r] = next[r - 1] + static_cast<std::size_t>(scount_[r - 1]) * per_;
  send_ = kept_send.take(n_remote_ * per_);
  for (std::size_t k = 0; k < nloc && ref_.ok; ++k) {
    if (remote_rank_[k] < 0) continue;
    std::size_t& at = next[static_cast<std::size_t>(remote_rank_[k])];
    remote_slot_[k] = static_cast<std::int64_t>(at);
    const GridRecord& g = grids.grids[rows.perm[k]];
    double* m = send_.data() + at;
    m[0] = static_cast<double>(rows.parent_row[k]);  // rows < 2^53: exact
    m[1] = static_cast<double>(rows.layout.row_of[k]);
    m[2] = g.bbox[0];
    m[3] = g.bbox[2];
    m[4] = g.bbox[4];
    at += per_;
  }
  out_.resize(specs.size());
  octants_.resize(specs.size());
  shares_.resize(specs.size());
  added_.assign(specs.size(), 0);
  for (const std::size_t i : fields_) {
    out_[i].assign(3 * nloc, 0.0);
    if (ref_.shares) octants_[i].assign(nc_ * nloc, 0.0);  // the root's row stays 0
  }
}

StepStatistics::~StepStatistics() { kept_send.give(std::move(send_)); }

std::array<int, 3> StepStatistics::octant(const BoxRow& child, const BoxRow& parent) const {
  std::array<int, 3> o{0, 0, 0};
  for (std::size_t a = 0; a < 3; ++a)
    if (ref_.f[a] == 2) {
      const double lo = parent[2 * a], hi = parent[2 * a + 1];
      o[a] = child[2 * a] - lo > 0.25 * (hi - lo) ? 1 : 0;
    }
  return o;
}

/// A child's share of its parent's detail from its block moments: the sum over its cells of
/// (value - the parent's cell covering it)², as the sum of its blocks' squared deviations
/// (m[nblocks], summed in block order) plus, over the blocks in x-fastest order,
/// n (mean - p)²; the parent's cells as the file stores them (a float32 field's values
/// rounded as they are written). The same terms binned by the child's octant of the block
/// (ox + 2 oy + 4 oz, refined axes only) into bins[0, nc_), starting from the octants'
/// squared deviations (m[nblocks + 1 + o]).
double StepStatistics::share(std::size_t i, std::size_t parent, const std::array<int, 3>& o, const double* m,
                             double* bins) const {
  const double n = ref_.cells();
  const GridRecord& g = grids_.grids[rows_.perm[parent]];
  const double* a = g.fields[static_cast<std::size_t>(specs_[i].slot)];
  const bool f32 = specs_[i].float32;
  const auto px = static_cast<std::size_t>(blk_.sx + 2 * h_), py = static_cast<std::size_t>(blk_.sy + 2 * h_);
  double sum = m[nblocks_];
  std::copy_n(m + nblocks_ + 1, nc_, bins);
  std::size_t j = 0;
  for (int bz = 0; bz < nb_[2]; ++bz)
    for (int by = 0; by < nb_[1]; ++by) {
      const std::size_t oyz = (bz >= half_[2] ? 4u : 0u) + (by >= half_[1] ? 2u : 0u);
      const double* prow =
          a +
          (static_cast<std::size_t>(o[2] * nb_[2] + bz + h_) * py + static_cast<std::size_t>(o[1] * nb_[1] + by + h_)) *
              px +
          static_cast<std::size_t>(o[0] * nb_[0] + h_);
      for (int bx = 0; bx < nb_[0]; ++bx, ++j) {
        const double pv = f32 ? static_cast<double>(static_cast<float>(prow[bx])) : prow[bx];
        const double d = m[j] - pv;
        const double t = n * d * d;
        sum += t;
        bins[oyz + (bx >= half_[0] ? 1u : 0u)] += t;
      }
    }
  return sum;
}

namespace {

/// A value as the file stores it (S), widened: a double array's value of a float32 field
/// rounded as it is written, so the statistics are those of the stored cells.
template <typename S, typename T>
double as_stored(T v) {
  return static_cast<double>(static_cast<S>(v));
}

/// sum[b] += the fx values of block b in row (x fastest), in x order; fx = 2 spelled out so
/// that the loop runs across blocks in vector lanes (each block's order of sums kept).
template <typename S, typename T>
void add_blocks(const T* row, std::size_t nbx, int fx, double* sum) {
  if (fx == 2) {
    for (std::size_t b = 0; b < nbx; ++b) sum[b] = (sum[b] + as_stored<S>(row[2 * b])) + as_stored<S>(row[2 * b + 1]);
    return;
  }
  for (std::size_t b = 0; b < nbx; ++b)
    for (int dx = 0; dx < fx; ++dx) sum[b] += as_stored<S>(row[b * static_cast<std::size_t>(fx) + dx]);
}

/// m2[b] += the squared deviations from mean[b] of the fx values of block b in row, in x order.
template <typename S, typename T>
void add_squares(const T* row, std::size_t nbx, int fx, const double* mean, double* m2) {
  if (fx == 2) {
    for (std::size_t b = 0; b < nbx; ++b) {
      const double d0 = as_stored<S>(row[2 * b]) - mean[b], d1 = as_stored<S>(row[2 * b + 1]) - mean[b];
      m2[b] = (m2[b] + d0 * d0) + d1 * d1;
    }
    return;
  }
  for (std::size_t b = 0; b < nbx; ++b)
    for (int dx = 0; dx < fx; ++dx) {
      const double d = as_stored<S>(row[b * static_cast<std::size_t>(fx) + dx]) - mean[b];
      m2[b] += d * d;
    }
}

}  // namespace

/// A child's blocks (the cells one parent cell covers): into m[0, nblocks) each block's
/// mean, m[nblocks] the sum of their squared deviations (in block order), and
/// m[nblocks + 1 + o] that sum over the blocks in octant o (share()'s layout).
template <typename S, typename T>
void StepStatistics::moments(const T* values, const Layout& at, double* m) const {
  // Row by row (x contiguous), each block's sums in the order of its cells (z, y, x), as a
  // block-by-block loop would add them: the same bits, without a gather per block.
  const double n = ref_.cells();
  const int fx = ref_.f[0], fy = ref_.f[1], fz = ref_.f[2];
  const auto nbx = static_cast<std::size_t>(nb_[0]);
  thread_local std::vector<double> mean, m2;  // scratch, of the thread the pass runs on
  mean.resize(nbx);
  m2.resize(nbx);
  double* const total = m + nblocks_;
  double* const bins = total + 1;
  *total = 0.0;
  std::fill_n(bins, nc_, 0.0);
  std::size_t b0 = 0;
  for (int bz = 0; bz < nb_[2]; ++bz)
    for (int by = 0; by < nb_[1]; ++by, b0 += nbx) {
      const std::size_t oyz = (bz >= half_[2] ? 4u : 0u) + (by >= half_[1] ? 2u : 0u);
      std::fill(mean.begin(), mean.end(), 0.0);
      std::fill(m2.begin(), m2.end(), 0.0);
      for (int dz = 0; dz < fz; ++dz)
        for (int dy = 0; dy < fy; ++dy)
          add_blocks<S>(values + at.base + (bz * fz + dz) * at.sz + (by * fy + dy) * at.sy, nbx, fx, mean.data());
      for (std::size_t bx = 0; bx < nbx; ++bx) mean[bx] /= n;
      for (int dz = 0; dz < fz; ++dz)
        for (int dy = 0; dy < fy; ++dy)
          add_squares<S>(values + at.base + (bz * fz + dz) * at.sz + (by * fy + dy) * at.sy, nbx, fx, mean.data(),
                         m2.data());
      std::copy_n(mean.data(), nbx, m + b0);
      // In locals, each sum in block order (the bins' x halves split the row).
      const auto hx = static_cast<std::size_t>(half_[0]);
      double t = *total, lower = bins[oyz], upper = bins[oyz + 1];
      for (std::size_t bx = 0; bx < nbx; ++bx) {
        t += m2[bx];
        if (bx < hx) lower += m2[bx];
        else upper += m2[bx];
      }
      *total = t;
      bins[oyz] = lower;
      if (hx < nbx) bins[oyz + 1] = upper;
    }
}
template <typename S, typename T>
void StepStatistics::add(std::size_t i, std::size_t k, const T* values, const Layout& at) {
  const GridRecord& g = grids_.grids[rows_.perm[k]];
  const std::uint8_t* types = g.cell_type;
  const int px = blk_.sx + 2 * h_, py = blk_.sy + 2 * h_;
  // Minimum and maximum over the non-solid cells: a row with no solid cell (most) without the test.
  thread_local std::vector<double> lo, hi, m;  // scratch, of the thread the pass runs on
  lo.assign(static_cast<std::size_t>(blk_.sx), kInf);
  hi.assign(static_cast<std::size_t>(blk_.sx), -kInf);
  for (int z = 0; z < blk_.sz; ++z)
    for (int y = 0; y < blk_.sy; ++y) {
      const T* row = values + at.base + z * at.sz + y * at.sy;
      const std::uint8_t* trow = types ? types +
                                             (static_cast<std::size_t>(z + h_) * static_cast<std::size_t>(py) +
                                              static_cast<std::size_t>(y + h_)) *
                                                 static_cast<std::size_t>(px) +
                                             static_cast<std::size_t>(h_)
                                       : nullptr;
      bool solid = false;
      if (trow)
        for (int x = 0; x < blk_.sx; ++x) solid |= trow[x] == kSolid;
      if (!solid) {
        for (int x = 0; x < blk_.sx; ++x) {
          const double v = as_stored<S>(row[x]);
          lo[static_cast<std::size_t>(x)] = lo[static_cast<std::size_t>(x)] < v ? lo[static_cast<std::size_t>(x)] : v;
          hi[static_cast<std::size_t>(x)] = hi[static_cast<std::size_t>(x)] > v ? hi[static_cast<std::size_t>(x)] : v;
        }
      } else {
        for (int x = 0; x < blk_.sx; ++x) {
          if (trow[x] == kSolid) continue;
          const double v = as_stored<S>(row[x]);
          lo[static_cast<std::size_t>(x)] = std::min(lo[static_cast<std::size_t>(x)], v);
          hi[static_cast<std::size_t>(x)] = std::max(hi[static_cast<std::size_t>(x)], v);
        }
      }
    }
  double mn = kInf, mx = -kInf;
  for (std::size_t x = 0; x < lo.size(); ++x) {
    mn = std::min(mn, lo[x]);
    mx = std::max(mx, hi[x]);
  }
  double* o = &out_[i][3 * k];
  o[0] = mn <= mx ? mn : std::numeric_limits<double>::quiet_NaN();
  o[1] = mn <= mx ? mx : std::numeric_limits<double>::quiet_NaN();
  if (!ref_.ok || (local_parent_[k] < 0 && remote_slot_[k] < 0)) return;
  // Every child's share of its parent's detail goes through its block moments, wherever the
  // parent is, and the parent sums its children's shares in row order: the file does not
  // depend on the partition, bit for bit.
  if (local_parent_[k] < 0) {  // its parent is elsewhere: the moments go straight into its message
    moments<S>(values, at,
               send_.data() + static_cast<std::size_t>(remote_slot_[k]) + kHeader + field_at_[i] * per_field());
    return;
  }
  m.resize(per_field());
  moments<S>(values, at, m.data());
  const auto parent = static_cast<std::size_t>(local_parent_[k]);
  const GridRecord& c = grids_.grids[rows_.perm[k]];
  std::array<double, 8> bins{};
  shares_[i].push_back(
      {parent, rows_.layout.row_of[k],
       share(i, parent, octant(c.bbox, grids_.grids[rows_.perm[parent]].bbox), m.data(), bins.data())});
  if (ref_.shares) std::copy_n(bins.begin(), nc_, &octants_[i][nc_ * k]);
}

void StepStatistics::add_grid(std::size_t i, std::size_t k) {
  const std::ptrdiff_t px = blk_.sx + 2 * h_, py = blk_.sy + 2 * h_;
  const Layout at{(h_ * py + h_) * px + h_, px, px * py};
  const double* a = grids_.grids[rows_.perm[k]].fields[static_cast<std::size_t>(specs_[i].slot)];
  if (specs_[i].float32) add<float>(i, k, a, at);
  else add<double>(i, k, a, at);
  ++added_[i];
}

void StepStatistics::add_all() {
  for (const std::size_t i : fields_)
    for (std::size_t k = 0; k < rows_.perm.size(); ++k) add_grid(i, k);
}

void StepStatistics::add_rest() {
  const std::size_t nloc = rows_.perm.size();
  for (const std::size_t i : fields_) {
    if (added_[i] == nloc) continue;
    shares_[i].clear();  // a field half taken (cannot happen: a failed write ends the step) starts again
    added_[i] = 0;
    for (std::size_t k = 0; k < nloc; ++k) add_grid(i, k);
  }
}

void StepStatistics::exchange() {
  const std::size_t nf = fields_.size(), per = per_;
  const std::size_t size = scount_.size();
  std::vector<int> scount(size, 0), sdispl(size, 0), rcount(size, 0), rdispl(size, 0);
  for (std::size_t r = 0; r < size; ++r) scount[r] = static_cast<int>(static_cast<std::size_t>(scount_[r]) * per);
  MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm_);
  int s_total = 0, r_total = 0;
  for (std::size_t r = 0; r < size; ++r) {
    sdispl[r] = s_total;
    s_total += scount[r];
    rdispl[r] = r_total;
    r_total += rcount[r];
  }
  KeptDoubles::Lease recv_lease(kept_recv, static_cast<std::size_t>(r_total));
  const double* const recv = recv_lease.data();
  MPI_Alltoallv(send_.data(), scount.data(), sdispl.data(), MPI_DOUBLE, recv_lease.data(), rcount.data(), rdispl.data(),
                MPI_DOUBLE, comm_);
  const auto received = static_cast<std::size_t>(r_total);
  std::vector<double> bins(received / per * nf * nc_, 0.0);  // per message: nf × nc_
  for (std::size_t off = 0; off + per <= received; off += per) {
    const double* m = &recv[off];
    const auto it = local_of_row_.find(static_cast<std::int64_t>(m[0]));
    if (it == local_of_row_.end()) continue;  // cannot happen: the links named this rank
    const std::size_t parent = it->second;
    const GridRecord& p = grids_.grids[rows_.perm[parent]];
    const BoxRow lower{m[2], m[2], m[3], m[3], m[4], m[4]};
    const std::array<int, 3> o = octant(lower, p.bbox);
    for (std::size_t jf = 0; jf < nf; ++jf) {
      const std::size_t i = fields_[jf];
      shares_[i].push_back({parent, static_cast<std::int64_t>(m[1]),
                            share(i, parent, o, m + kHeader + jf * per_field(), &bins[(off / per * nf + jf) * nc_])});
    }
  }
  if (ref_.shares) return_bins(scount, rcount, per, bins);
}

void StepStatistics::return_bins(const std::vector<int>& scount, const std::vector<int>& rcount, std::size_t per,
                                 const std::vector<double>& bins) {
  // One reply per message received, in the order received: its nf × nc_ bins. A child's
  // rank sent its messages in local order, grouped by the parent's rank, so it reads the
  // replies from each rank in that order.
  const std::size_t each = fields_.size() * nc_, size = scount.size();
  std::vector<int> bcount(size), bdispl(size), ccount(size), cdispl(size);
  int b_total = 0, c_total = 0;
  for (std::size_t r = 0; r < size; ++r) {
    bcount[r] = static_cast<int>(static_cast<std::size_t>(rcount[r]) / per * each);
    ccount[r] = static_cast<int>(static_cast<std::size_t>(scount[r]) / per * each);
    bdispl[r] = b_total;
    cdispl[r] = c_total;
    b_total += bcount[r];
    c_total += ccount[r];
  }
  std::vector<double> back(static_cast<std::size_t>(c_total));
  MPI_Alltoallv(bins.data(), bcount.data(), bdispl.data(), MPI_DOUBLE, back.data(), ccount.data(), cdispl.data(),
                MPI_DOUBLE, comm_);
  std::vector<int> at(cdispl);
  for (std::size_t k = 0; k < remote_rank_.size(); ++k) {
    if (remote_rank_[k] < 0) continue;
    const double* b = &back[static_cast<std::size_t>(at[static_cast<std::size_t>(remote_rank_[k])])];
    at[static_cast<std::size_t>(remote_rank_[k])] += static_cast<int>(each);
    for (std::size_t j = 0; j < fields_.size(); ++j) std::copy_n(b + j * nc_, nc_, &octants_[fields_[j]][nc_ * k]);
  }
}

void StepStatistics::finish() {
  if (ref_.ok) exchange();
  for (const std::size_t i : fields_) {
    auto& sh = shares_[i];
    std::sort(sh.begin(), sh.end(), [](const Share& a, const Share& b) {
      return a.parent != b.parent ? a.parent < b.parent : a.child_row < b.child_row;
    });
    for (const Share& x : sh) out_[i][3 * x.parent + 2] += x.sum;
    for (std::size_t k = 0; 3 * k < out_[i].size(); ++k) out_[i][3 * k + 2] = std::sqrt(out_[i][3 * k + 2]);
    for (double& x : octants_[i]) x = std::sqrt(x);
  }
}

}  // namespace rwd::kernel::detail

namespace rwd::kernel {

namespace {

/// Every rank throws `problem` (or, where it has none, a line saying another rank had
/// one) if any rank has a problem. Collective.
void agree_or_throw(MPI_Comm comm, const std::string& problem, const char* elsewhere) {
  int mine = problem.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any) throw std::invalid_argument(problem.empty() ? std::string(elsewhere) : problem);
}

}  // namespace

std::array<double, 2> grid_range(const LocalGrids& grids, std::size_t g, int slot) {
  const GridRecord& rec = grids.grids.at(g);
  if (slot < 0 || static_cast<std::size_t>(slot) >= rec.fields.size() || !rec.fields[static_cast<std::size_t>(slot)])
    throw std::invalid_argument(fmt::format("grid range: grid {} has no field in slot {}", rec.uid, slot));
  const double* values = rec.fields[static_cast<std::size_t>(slot)];
  const auto& b = grids.block;
  const auto h = static_cast<std::size_t>(grids.halo);
  const auto sx = static_cast<std::size_t>(b.sx);
  const std::size_t px = sx + 2 * h, py = static_cast<std::size_t>(b.sy) + 2 * h;
  // Lane by lane (x), as the writer's pass: rows without a solid cell (most) vectorise.
  constexpr double inf = std::numeric_limits<double>::infinity();
  thread_local std::vector<double> lo, hi;
  lo.assign(sx, inf);
  hi.assign(sx, -inf);
  for (std::size_t z = 0; z < static_cast<std::size_t>(b.sz); ++z)
    for (std::size_t y = 0; y < static_cast<std::size_t>(b.sy); ++y) {
      const std::size_t at = ((z + h) * py + (y + h)) * px + h;
      const double* row = values + at;
      bool solid = false;
      if (rec.cell_type)
        for (std::size_t x = 0; x < sx; ++x) solid |= rec.cell_type[at + x] == detail::kSolid;
      for (std::size_t x = 0; x < sx; ++x) {
        const bool skip = solid && rec.cell_type[at + x] == detail::kSolid;
        lo[x] = skip || lo[x] < row[x] ? lo[x] : row[x];
        hi[x] = skip || hi[x] > row[x] ? hi[x] : row[x];
      }
    }
  double mn = inf, mx = -inf;
  for (std::size_t x = 0; x < sx; ++x) {
    mn = std::min(mn, lo[x]);
    mx = std::max(mx, hi[x]);
  }
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  return mn <= mx ? std::array<double, 2>{mn, mx} : std::array<double, 2>{nan, nan};
}

std::vector<GridStatistic> grid_statistics(MPI_Comm comm, const LocalGrids& grids, int max_children, int slot,
                                           bool float32, std::vector<double>* shares) {
  if (shares) shares->clear();
  if (!detail::refinement_of(grids.block, max_children).ok) return {};
  constexpr int L = fmt_names::kMaxLevels;
  std::string bad;
  std::vector<std::int64_t> local(L + 1, 0), total(L + 1, 0), before(L, 0);
  for (const auto& g : grids.grids) {
    if (g.level < 0 || g.level >= L)
      bad = fmt::format("grid statistics: grid {} has level {}, not 0..{}", g.uid, g.level, L - 1);
    else if (slot < 0 || static_cast<std::size_t>(slot) >= g.fields.size() || !g.fields[static_cast<std::size_t>(slot)])
      bad = fmt::format("grid statistics: grid {} has no field in slot {}", g.uid, slot);
    else ++local[static_cast<std::size_t>(g.level)];
  }
  agree_or_throw(comm, bad, "grid statistics: another rank's grids are not usable");
  MPI_Allreduce(local.data(), total.data(), L, MPI_INT64_T, MPI_SUM, comm);
  MPI_Exscan(local.data(), before.data(), L, MPI_INT64_T, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) std::fill(before.begin(), before.end(), 0);  // Exscan leaves rank 0 undefined
  // The rows a step written from these grids would give them: the same order of sums.
  detail::StepRows rows;
  rows.perm = detail::local_order(grids.grids);
  std::vector<int> levels(rows.perm.size());
  for (std::size_t k = 0; k < levels.size(); ++k) levels[k] = grids.grids[rows.perm[k]].level;
  rows.layout = detail::assign_rows(levels, std::vector<std::int64_t>(total.begin(), total.begin() + L), before);
  agree_or_throw(comm, detail::exchange_links(comm, max_children, grids, rows),
                 "grid statistics: another rank's grids are not one tree");
  FieldSpec spec;
  spec.name = "field";
  spec.slot = slot;
  spec.float32 = float32;
  const std::vector<FieldSpec> specs{spec};
  detail::StepStatistics st(comm, grids.block, max_children, specs, grids, rows, {0});
  st.add_all();
  if (rows.layout.n_grids > 0) st.finish();  // collective; every rank has the same n_grids
  std::vector<GridStatistic> out(grids.grids.size());
  for (std::size_t k = 0; k < rows.perm.size(); ++k) std::copy_n(st.row(0, k), 3, out[rows.perm[k]].begin());
  if (shares && st.has_shares()) {
    const auto nc = static_cast<std::size_t>(max_children);
    shares->assign(grids.grids.size() * nc, 0.0);
    for (std::size_t k = 0; k < rows.perm.size(); ++k)
      std::copy_n(st.shares_row(0, k), nc, &(*shares)[nc * rows.perm[k]]);
  }
  return out;
}

}  // namespace rwd::kernel
