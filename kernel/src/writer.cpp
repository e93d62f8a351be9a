#include "rewind/kernel/writer.hpp"
#include "rewind/kernel/lineage.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <future>
#include <mutex>
#include <numeric>
#include <optional>
#include <new>
#include <set>
#include <type_traits>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collective.hpp"
#include "direct_io.hpp"
#include "format.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/views.hpp"

namespace rwd::kernel {

using h5::Ctx;
namespace names = fmt_names;
using detail::agree;
using detail::phase;

namespace {

bool valid_name(const std::string& n) {
  return !n.empty() && n.find('/') == std::string::npos && n.find('.') == std::string::npos &&
         n.find(' ') == std::string::npos;
}

/// The linear write buffer: anonymous memory, not zero-filled by us (every byte that is
/// written is packed first), on transparent huge pages where the kernel allows it. A
/// std::vector memset the whole buffer and then took one 4 KiB page fault per page on
/// the first touch: for a 150 MB buffer that was a visible share of a page-cache write.
class LinearBuffer {
 public:
  explicit LinearBuffer(std::size_t n) : size_(n) {
    if (n == 0) return;
    constexpr std::size_t huge = std::size_t{2} << 20;
    len_ = n + huge;
    void* p = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<unsigned char*>(p);
    const auto a = reinterpret_cast<std::uintptr_t>(base_);
    data_ = base_ + ((huge - a % huge) % huge);  // 2 MiB aligned start
#ifdef MADV_HUGEPAGE
    ::madvise(data_, n, MADV_HUGEPAGE);  // advisory; failure just means 4 KiB pages
#endif
  }
  LinearBuffer(const LinearBuffer&) = delete;
  LinearBuffer& operator=(const LinearBuffer&) = delete;
  ~LinearBuffer() {
    if (base_) ::munmap(base_, len_);
  }
  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
  std::size_t len_ = 0, size_ = 0;
};

/// The buffer kept between steps (IoOptions::keep_buffer): one per process, handed to
/// whichever writer needs one next. Memory first touched is expensive on some systems
/// (a VM whose host reclaims freed pages: ~0.4 GB/s here) and a solver writes many
/// steps, so by default the buffer is mapped once and reused, like the solver's arrays.
std::mutex kept_mutex;
std::unique_ptr<LinearBuffer> kept_buffer;

std::unique_ptr<LinearBuffer> acquire_buffer(std::size_t n, bool& reused) {
  reused = false;
  if (n == 0) return std::make_unique<LinearBuffer>(0);
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    if (kept_buffer && kept_buffer->size() >= n) {
      reused = true;
      return std::move(kept_buffer);
    }
    kept_buffer.reset();  // too small (or none): unmap before mapping a larger one
  }
  return std::make_unique<LinearBuffer>(n);
}

void return_buffer(std::unique_ptr<LinearBuffer> b, bool keep) {
  if (!keep || !b || b->size() == 0) return;
  std::lock_guard<std::mutex> lock(kept_mutex);
  if (!kept_buffer || kept_buffer->size() < b->size()) kept_buffer = std::move(b);
}

}  // namespace

struct Writer::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::string path;
  CommonInfo common;
  IoOptions opts;
  Ctx ctx;
  h5::File file;
  h5::Plist dxpl_coll;
  std::int64_t last_step = -1;
  bool helper_threads = false;  ///< MPI_THREAD_FUNNELED or more: helpers may exist
  MPI_Comm node_comm = MPI_COMM_NULL;  ///< the ranks sharing this node (and page cache)
  int node_size = 1;
  bool early_writeback = false; ///< the node leader starts writeback after each dataset
  int writeback_fd = -1;        ///< node leader only: descriptor for sync_file_range, or -1

  void hook(const char* phase_name) const {
    if (opts.on_phase) opts.on_phase(phase_name);
  }

  void open_common(MPI_Comm c, const std::string& p, const IoOptions& o) {
    h5::silence_errors();
    MPI_Comm_dup(c, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    path = p;
    opts = o;
    ctx = Ctx{p};
    dxpl_coll = h5::Plist(ctx.check(H5Pcreate(H5P_DATASET_XFER), "create dxpl"));
    if (opts.collective_transfer) ctx.check_status(H5Pset_dxpl_mpio(dxpl_coll, H5FD_MPIO_COLLECTIVE), "set collective");
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    helper_threads = level >= MPI_THREAD_FUNNELED;
  }

  /// After the file exists: a descriptor only for starting writeback (a file system
  /// without sync_file_range, or a failed open, just means no early writeback). One rank
  /// per node starts the writeback of all the node's rows, one dataset after the other:
  /// the page cache is the node's, and when every rank started its own interleaved
  /// ranges at once, 2-rank durable writes got slower than with no early writeback.
  void open_writeback() {
#ifdef SYNC_FILE_RANGE_WRITE
    if (!(opts.early_writeback && opts.flush_on_commit && helper_threads)) return;
    early_writeback = true;  // the same on every rank: it decides the gather in write_step
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_size(node_comm, &node_size);
    int node_rank = 0;
    MPI_Comm_rank(node_comm, &node_rank);
    if (node_rank == 0) writeback_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
#endif
  }

  void flush() const {
    ctx.check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush file");
  }

  ~Impl() {
    if (writeback_fd >= 0) ::close(writeback_fd);
    try {
      if (file.valid()) {
        if (file.close() < 0) std::fprintf(stderr, "rewind kernel: %s: closing the file failed\n", path.c_str());
      }
    } catch (...) {
    }
    int fin = 0;
    MPI_Finalized(&fin);
    if (comm != MPI_COMM_NULL && !fin) MPI_Comm_free(&comm);
    if (node_comm != MPI_COMM_NULL && !fin) MPI_Comm_free(&node_comm);
  }
};

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;
Writer::~Writer() = default;

const std::string& Writer::path() const { return impl_->path; }
const CommonInfo& Writer::common() const { return impl_->common; }
std::int64_t Writer::last_step() const { return impl_->last_step; }

namespace {
// The lineage as stored: the parent relative to the branch file's directory (a run and
// its branches move together), its absolute path kept as a hint.
CommonInfo with_relative_parent(CommonInfo common, const std::string& path) {
  auto& l = common.lineage;
  if (l.parent_file.empty()) return common;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::weakly_canonical(fs::absolute(l.parent_file, ec), ec);
  const fs::path dir = fs::weakly_canonical(fs::absolute(path, ec), ec).parent_path();
  if (ec) return common;
  l.parent_file_absolute = parent.string();
  l.parent_file = parent.lexically_relative(dir).string();
  if (l.parent_file.empty()) l.parent_file = parent.string();
  return common;
}
}  // namespace

Writer Writer::create(MPI_Comm comm, const std::string& path, const CommonInfo& given, const IoOptions& options) {
  const CommonInfo common = with_relative_parent(given, path);
  auto im = std::make_unique<Impl>();
  im->open_common(comm, path, options);
  im->common = common;
  Impl& w = *im;
  phase(w.comm, path, [&] {
    const auto& b = common.block;
    if (b.sx < 1 || b.sy < 1 || b.sz < 1)
      w.ctx.fail(ErrorKind::invalid_argument, "block shape must be positive");
    if (common.dim != 2 && common.dim != 3) w.ctx.fail(ErrorKind::invalid_argument, "dim must be 2 or 3");
    if (common.max_children < 0) w.ctx.fail(ErrorKind::invalid_argument, "max_children must be >= 0");
    for (const auto& v : common.variables)
      if (!valid_name(v.name)) w.ctx.fail(ErrorKind::invalid_argument, "bad variable name '" + v.name + "'");
  });
  phase(w.comm, path, [&] {
    h5::Plist fapl = detail::make_fapl(w.ctx, w.comm, w.opts);
    w.file = h5::File(w.ctx.check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "cannot create file"));
  });
  phase(w.comm, path, [&] {
    detail::write_header(w.ctx, w.file, common, w.dxpl_coll, w.rank == 0);
    if (w.opts.flush_on_commit) w.flush();  // /common durable before any step
  });
  // A branch is listed beside its parent, so the parent's branches are found wherever
  // they live (best effort: the branch is valid without it).
  if (w.rank == 0 && !common.lineage.parent_file_absolute.empty())
    (void)register_branch(path, common.lineage.parent_file_absolute);
  w.open_writeback();
  return Writer(std::move(im));
}

Writer Writer::append(MPI_Comm comm, const std::string& path, const IoOptions& options) {
  auto im = std::make_unique<Impl>();
  im->open_common(comm, path, options);
  Impl& w = *im;
  std::vector<std::string> uncommitted;
  phase(w.comm, path, [&] {
    // Validate serially first so a bad file gives a clear error, not an MPI-IO failure.
    h5::File probe = detail::open_readonly_serial(path);
    probe.close();
    h5::Plist fapl = detail::make_fapl(w.ctx, w.comm, w.opts);
    w.file = h5::File(w.ctx.check(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), "cannot open file for appending"));
    w.common = detail::read_header(w.ctx, w.file, nullptr, nullptr);
    h5::Group sim = h5::open_group(w.ctx, w.file, names::kSimulation);
    for (const auto& n : h5::list_links(w.ctx, sim)) {
      if (n.rfind("step_", 0) != 0) continue;
      StepEntry e = detail::read_step_entry(w.ctx, w.file, n, w.common.block.cells());
      if (e.committed)
        w.last_step = std::max(w.last_step, e.step);
      else
        uncommitted.push_back(e.group);
    }
  });
  phase(w.comm, path, [&] {
    // A crash left these half-written; unlink them so the step numbers can be reused.
    for (const auto& g : uncommitted)
      w.ctx.check_status(H5Ldelete(w.file, g.c_str(), H5P_DEFAULT), "unlink uncommitted " + g);
    if (!uncommitted.empty()) w.flush();
  });
  w.open_writeback();
  return Writer(std::move(im));
}

void Writer::close() {
  if (!impl_ || !impl_->file.valid()) throw FileError(ErrorKind::invalid_argument, impl_ ? impl_->path : "?", "writer is closed");
  Impl& w = *impl_;
  phase(w.comm, w.path, [&] {
    w.flush();  // H5Fclose does not sync with the MPI-IO driver; flush does
    w.ctx.check_status(w.file.close(), "close file");
  });
}

namespace {
struct DatasetPlan {
  std::string path;
  hid_t file_type;
  hid_t mem_type;
  std::vector<hsize_t> shape;  // full file shape
  std::size_t elem_bytes;
  std::int64_t per_row;        // elements per row
};
}  // namespace

WriteStats Writer::write_step(const StepInfo& info, const LocalGrids& grids) {
  if (!impl_ || !impl_->file.valid()) throw FileError(ErrorKind::invalid_argument, impl_ ? impl_->path : "?", "writer is closed");
  Impl& w = *impl_;
  const Ctx& c = w.ctx;
  MPI_Barrier(w.comm);
  const double t0 = MPI_Wtime();
  const BlockShape blk = w.common.block;
  const std::int64_t cells = blk.cells();
  const int nc = w.common.max_children;
  const int h = grids.halo;
  const std::size_t nloc = grids.grids.size();

  // ---- 1. local validation (no collective yet) ----
  std::string bad;
  if (grids.block != blk && !grids.grids.empty())
    bad = fmt::format("grid block {}x{}x{} differs from the file's {}x{}x{}", grids.block.sx, grids.block.sy,
                      grids.block.sz, blk.sx, blk.sy, blk.sz);
  if (h < 0) bad = "negative halo";
  if (info.step <= w.last_step)
    bad = fmt::format("step {} is not after the last committed step {}", info.step, w.last_step);
  {
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& f : info.fields) {
      if (!valid_name(f.group) || !valid_name(f.name)) bad = "bad field name '" + f.group + "/" + f.name + "'";
      if (!seen.insert({f.group, f.name}).second) bad = "field '" + f.group + "/" + f.name + "' listed twice";
      if (f.group == "cell_type" || f.group == "uid") bad = "field group '" + f.group + "' is reserved";
    }
  }
  for (const auto& g : grids.grids) {
    if (!bad.empty()) break;
    if (g.level < 0 || g.level >= names::kMaxLevels) bad = fmt::format("grid {:#x}: level {} out of range", g.uid, g.level);
    else if (g.uid == kNoUid) bad = "a grid has no uid";
    else if (static_cast<int>(g.child_uids.size()) > nc)
      bad = fmt::format("grid {:#x} has {} children, more than max_children {}", g.uid, g.child_uids.size(), nc);
    else if (info.write_cell_type && !g.cell_type) bad = fmt::format("grid {:#x} has no cell_type array", g.uid);
    for (const auto& f : info.fields)
      if (f.slot < 0 || f.slot >= static_cast<int>(g.fields.size()) || !g.fields[static_cast<std::size_t>(f.slot)])
        bad = fmt::format("grid {:#x} has no array in slot {} for field {}/{}", g.uid, f.slot, f.group, f.name);
  }

  // Local order: (level, sort_key, uid).
  std::vector<std::size_t> perm(nloc);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = grids.grids[a];
    const auto& y = grids.grids[b];
    return std::tie(x.level, x.sort_key, x.uid) < std::tie(y.level, y.sort_key, y.uid);
  });

  // ---- 2. offsets: one Allreduce (totals per level, error flag, halo flag), one Exscan ----
  constexpr int L = names::kMaxLevels;
  // [0, L) grids per level, L error flag, L+1 halo flag, [L+2, 2L+2) leaf grids per level.
  std::vector<std::int64_t> local(2 * L + 2, 0), total(2 * L + 2, 0), before(L, 0);
  if (bad.empty())
    for (const auto& g : grids.grids) {
      ++local[static_cast<std::size_t>(g.level)];
      if (g.child_uids.empty()) ++local[static_cast<std::size_t>(L + 2 + g.level)];
    }
  local[L] = bad.empty() ? 0 : 1;
  local[L + 1] = h != 0 ? 1 : 0;
  MPI_Allreduce(local.data(), total.data(), 2 * L + 2, MPI_INT64_T, MPI_SUM, w.comm);
  const bool halo_free = total[L + 1] == 0;  // every rank's arrays are exactly its rows
  if (total[L] > 0) agree(w.comm, bad.empty() ? std::nullopt : std::optional<FileError>(FileError(ErrorKind::invalid_argument, w.path, bad)), w.path);
  MPI_Exscan(local.data(), before.data(), L, MPI_INT64_T, MPI_SUM, w.comm);
  if (w.rank == 0) std::fill(before.begin(), before.end(), 0);  // Exscan leaves rank 0 undefined

  std::vector<std::int64_t> level_start(L + 1, 0);
  for (int l = 0; l < L; ++l) level_start[l + 1] = level_start[l] + total[l];
  const std::int64_t n_grids = level_start[L];
  int n_levels = 0;
  for (int l = 0; l < L; ++l)
    if (total[l] > 0) n_levels = l + 1;

  std::vector<std::int64_t> row_of(nloc);  // indexed by local sorted position
  std::vector<h5::RowRun> runs;
  {
    std::vector<std::int64_t> next(L);
    for (int l = 0; l < L; ++l) next[l] = level_start[l] + before[l];
    for (std::size_t k = 0; k < nloc; ++k) {
      int l = grids.grids[perm[k]].level;
      row_of[k] = next[l]++;
      if (!runs.empty() && runs.back().start + runs.back().count == row_of[k])
        ++runs.back().count;
      else
        runs.push_back({row_of[k], 1});
    }
  }

  // ---- 3. links: one exchange of (uid, row) pairs, then every rank resolves its own ----
  std::vector<int> counts(static_cast<std::size_t>(w.size)), displs(static_cast<std::size_t>(w.size));
  int nloc_i = static_cast<int>(nloc) * 2;
  MPI_Allgather(&nloc_i, 1, MPI_INT, counts.data(), 1, MPI_INT, w.comm);
  int acc = 0;
  for (int r = 0; r < w.size; ++r) {
    displs[static_cast<std::size_t>(r)] = acc;
    acc += counts[static_cast<std::size_t>(r)];
  }
  std::vector<std::uint64_t> mine(nloc * 2), all(static_cast<std::size_t>(acc));
  for (std::size_t k = 0; k < nloc; ++k) {
    mine[2 * k] = grids.grids[perm[k]].uid;
    mine[2 * k + 1] = static_cast<std::uint64_t>(row_of[k]);
  }
  MPI_Allgatherv(mine.data(), nloc_i, MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T, w.comm);
  std::vector<std::pair<std::uint64_t, std::int64_t>> lookup(all.size() / 2);
  for (std::size_t i = 0; i < lookup.size(); ++i)
    lookup[i] = {all[2 * i], static_cast<std::int64_t>(all[2 * i + 1])};
  all.clear();
  all.shrink_to_fit();
  std::sort(lookup.begin(), lookup.end());
  std::string link_bad;
  for (std::size_t i = 1; i < lookup.size(); ++i)
    if (lookup[i].first == lookup[i - 1].first) link_bad = fmt::format("uid {:#x} appears twice", lookup[i].first);
  if (n_grids > 0 && total[0] != 1)
    link_bad = fmt::format("the tree must have exactly one level-0 (root) grid, found {}", total[0]);
  auto find_row = [&](std::uint64_t uid) -> std::int64_t {
    if (uid == kNoUid) return -1;
    auto it = std::lower_bound(lookup.begin(), lookup.end(), std::make_pair(uid, std::int64_t{-1}));
    if (it == lookup.end() || it->first != uid) {
      if (link_bad.empty()) link_bad = fmt::format("link to uid {:#x}, which no rank has", uid);
      return -1;
    }
    return it->second;
  };
  std::vector<std::int64_t> parent_row(nloc), child_rows(nloc * static_cast<std::size_t>(nc), -1);
  for (std::size_t k = 0; k < nloc; ++k) {
    const auto& g = grids.grids[perm[k]];
    parent_row[k] = find_row(g.parent_uid);
    for (std::size_t j = 0; j < g.child_uids.size(); ++j) child_rows[k * nc + j] = find_row(g.child_uids[j]);
  }
  lookup.clear();
  lookup.shrink_to_fit();
  phase(w.comm, w.path, [&] {
    if (!link_bad.empty()) c.fail(ErrorKind::invalid_argument, "bad tree: " + link_bad);
  });

  // ---- 4. plan datasets and create them collectively ----
  const std::vector<hsize_t> row_shape{static_cast<hsize_t>(n_grids)};
  const std::vector<hsize_t> cell_shape{static_cast<hsize_t>(n_grids), static_cast<hsize_t>(blk.sz),
                                        static_cast<hsize_t>(blk.sy), static_cast<hsize_t>(blk.sx)};
  const std::vector<hsize_t> child_shape{static_cast<hsize_t>(n_grids), static_cast<hsize_t>(nc)};
  std::vector<DatasetPlan> plan = {
      {"uid", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"sort_key", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"level", H5T_STD_I32LE, H5T_NATIVE_INT32, row_shape, 4, 1},
      {"rank", H5T_STD_I32LE, H5T_NATIVE_INT32, row_shape, 4, 1},
      {"parent_uid", H5T_STD_U64LE, H5T_NATIVE_UINT64, row_shape, 8, 1},
      {"parent_row", H5T_STD_I64LE, H5T_NATIVE_INT64, row_shape, 8, 1},
      {"child_uids", H5T_STD_U64LE, H5T_NATIVE_UINT64, child_shape, 8, nc},
      {"child_rows", H5T_STD_I64LE, H5T_NATIVE_INT64, child_shape, 8, nc},
      {"bounding_box", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {static_cast<hsize_t>(n_grids), 6}, 8, 6},
  };
  if (info.write_cell_type) plan.push_back({"cell_type", H5T_STD_U8LE, H5T_NATIVE_UINT8, cell_shape, 1, cells});
  const std::size_t first_field = plan.size();
  for (const auto& f : info.fields)
    plan.push_back({f.group + "/" + f.name, f.float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                    f.float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, cell_shape, f.float32 ? 4u : 8u, cells});

  std::int64_t bytes_global = 8 * (n_levels + 1), bytes_local = w.rank == 0 ? 8 * (n_levels + 1) : 0;
  for (const auto& p : plan) {
    bytes_global += n_grids * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
    bytes_local += static_cast<std::int64_t>(nloc) * p.per_row * static_cast<std::int64_t>(p.elem_bytes);
  }
  // Zero-copy candidates (IoOptions::zero_copy): cell datasets whose every array already
  // is the grid's row, byte for byte (no halo on any rank, the file's element type).
  // Decided from values every rank shares, so all ranks take the same path. Halo'd
  // arrays only with collective transfers: ROMIO's independent write of a subarray
  // memory type issues one pwrite per interior row (30 s instead of 3 s for 1.1 GiB).
  std::vector<char> direct(plan.size(), 0);
  const bool halo_ok = w.opts.zero_copy_halo && w.opts.collective_transfer;
  if (w.opts.zero_copy && w.opts.alloc_early && (halo_free || halo_ok) && n_grids > 0) {
    const bool double_as_is = H5Tequal(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE) > 0;
    for (std::size_t d = 0; d < plan.size(); ++d) {
      if (plan[d].path == "cell_type") direct[d] = 1;
      else if (d >= first_field && !info.fields[d - first_field].float32) direct[d] = double_as_is ? 1 : 0;
    }
  }

  const std::string gpath = detail::step_group_path(info.step);
  h5::Group step_group;
  std::vector<h5::Dataset> dsets;
  phase(w.comm, w.path, [&] {
    if (h5::exists(w.file, gpath)) c.fail(ErrorKind::invalid_argument, gpath + " already exists");
    step_group = h5::Group(c.check(H5Gcreate2(w.file, gpath.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create " + gpath));
    h5::write_attr_i64(c, step_group, "step", {info.step});
    h5::write_attr_f64(c, step_group, "time", {info.time});
    h5::write_attr_f64(c, step_group, "dt", {info.dt});
    h5::write_attr_string(c, step_group, "kind", to_string(info.kind));
    h5::write_attr_i64(c, step_group, "n_grids", {n_grids});
    h5::write_attr_i64(c, step_group, "n_levels", {n_levels});
    h5::write_attr_i64_array(c, step_group, "leaf_grids_per_level",
                       std::vector<std::int64_t>(total.begin() + L + 2, total.begin() + L + 2 + n_levels));
    h5::write_attr_i64(c, step_group, "bytes", {bytes_global});
    if (!info.case_overrides.empty()) {
      std::string lines;
      for (const auto& o : info.case_overrides) {
        if (o.find('\n') != std::string::npos) c.fail(ErrorKind::invalid_argument, "a case override holds a newline");
        lines += o + "\n";
      }
      h5::write_attr_string(c, step_group, "case_overrides", lines);
    }
    if (!info.monitor_state.empty()) h5::write_attr_f64(c, step_group, "monitor_state", info.monitor_state);
    h5::write_attr_u8(c, step_group, "committed", 0);
    std::set<std::string> groups;
    for (const auto& f : info.fields) groups.insert(f.group);
    for (const auto& g : groups)
      h5::Group(c.check(H5Gcreate2(step_group, g.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create " + g));
    h5::Plist dcpl = detail::make_dcpl(c, w.opts);
    for (const auto& p : plan) {
      h5::Dataspace sp(c.check(H5Screate_simple(static_cast<int>(p.shape.size()), p.shape.data(), nullptr), "space"));
      dsets.emplace_back(c.check(H5Dcreate2(step_group, p.path.c_str(), p.file_type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                                 "create dataset " + p.path));
    }
    hsize_t nl = static_cast<hsize_t>(n_levels + 1);
    h5::Dataspace sp(c.check(H5Screate_simple(1, &nl, nullptr), "space"));
    h5::Dataset lo(c.check(H5Dcreate2(step_group, "level_offsets", H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                           "create level_offsets"));
    hsize_t mine_n = w.rank == 0 ? nl : 0;
    h5::Dataspace ms(c.check(H5Screate_simple(1, &mine_n, nullptr), "space"));
    if (w.rank != 0) {
      H5Sselect_none(sp);
      H5Sselect_none(ms);
    }
    c.check_status(H5Dwrite(lo, H5T_NATIVE_INT64, ms, sp, w.dxpl_coll, level_start.data()), "write level_offsets");
  });
  w.hook("created");
  // The file offset of every zero-copy dataset (allocated at creation: the same on all
  // ranks); a dataset without one falls back to the linear buffer.
  std::vector<std::int64_t> direct_at(plan.size(), -1);
  std::int64_t direct_datasets = 0;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    const haddr_t at = direct[d] ? H5Dget_offset(dsets[d]) : HADDR_UNDEF;
    direct[d] = at != HADDR_UNDEF ? 1 : 0;
    if (direct[d]) {
      direct_at[d] = static_cast<std::int64_t>(at);
      ++direct_datasets;
    }
  }
  std::size_t half_bytes = 0;  // the largest packed dataset's share of this rank
  std::int64_t packed_bytes = 0;
  for (std::size_t d = 0; d < plan.size(); ++d) {
    if (direct[d]) continue;
    const std::size_t b = nloc * static_cast<std::size_t>(plan[d].per_row) * plan[d].elem_bytes;
    half_bytes = std::max(half_bytes, b);
    packed_bytes += static_cast<std::int64_t>(b);
  }
  // Two halves (pack d+1 while d is written) only while the buffer stays within one
  // copy of the packed data; a step of one big packed variable packs and writes in turn.
  const bool pipelined = w.opts.pipeline && w.helper_threads && plan.size() > 1 &&
                         2 * half_bytes <= static_cast<std::size_t>(packed_bytes);
  const std::size_t buffer_bytes = pipelined ? 2 * half_bytes : half_bytes;
  MPI_File direct_fh = MPI_FILE_NULL;
  if (direct_datasets > 0) phase(w.comm, w.path, [&] { direct_fh = detail::mpi_file_of(c, w.file); });

  // ---- 5. the data: one linear buffer, one collective write per dataset ----
  // With `pipelined`, a helper packs dataset d+1 into the other half of the buffer while
  // the main thread's H5Dwrite writes d; with `writeback_fd`, another helper starts the
  // disk writeback of d's bytes meanwhile. Helpers touch only memory and the
  // descriptor; every MPI and HDF5 call stays on this thread.
  bool buffer_reused = false;
  std::int64_t writeback_datasets = 0;
  std::unique_ptr<LinearBuffer> held = acquire_buffer(buffer_bytes, buffer_reused);
  const LinearBuffer& buffer = *held;
  bool all_collective = true;
  // The node's row runs, merged, on the node leader (early writeback only).
  std::vector<h5::RowRun> node_runs;
  if (w.early_writeback) {
    int nn = 0;
    const int node_size = w.node_size;
    std::vector<std::int64_t> mine_runs;
    for (const auto& r : runs) {
      mine_runs.push_back(r.start);
      mine_runs.push_back(r.count);
    }
    int nm = static_cast<int>(mine_runs.size());
    std::vector<int> cnt(static_cast<std::size_t>(node_size)), dsp(static_cast<std::size_t>(node_size));
    MPI_Gather(&nm, 1, MPI_INT, cnt.data(), 1, MPI_INT, 0, w.node_comm);
    for (int r = 0; r < node_size; ++r) {
      dsp[static_cast<std::size_t>(r)] = nn;
      nn += cnt[static_cast<std::size_t>(r)];
    }
    std::vector<std::int64_t> all_runs(static_cast<std::size_t>(w.writeback_fd >= 0 ? nn : 0));
    MPI_Gatherv(mine_runs.data(), nm, MPI_INT64_T, all_runs.data(), cnt.data(), dsp.data(), MPI_INT64_T, 0, w.node_comm);
    for (std::size_t i = 0; i + 1 < all_runs.size(); i += 2) node_runs.push_back({all_runs[i], all_runs[i + 1]});
    std::sort(node_runs.begin(), node_runs.end(), [](const h5::RowRun& a, const h5::RowRun& b) { return a.start < b.start; });
    std::vector<h5::RowRun> merged;
    for (const auto& r : node_runs) {
      if (!merged.empty() && merged.back().start + merged.back().count == r.start) merged.back().count += r.count;
      else merged.push_back(r);
    }
    node_runs = std::move(merged);
  }
  std::shared_future<void> writeback;  // the last started; each waits for the one before
  phase(w.comm, w.path, [&] {
    if (n_grids == 0) return;  // all ranks empty: skip (HDF5 1.10.8 "addr overflow")
    const int px = blk.sx + 2 * h, py = blk.sy + 2 * h;
    auto pack_cells = [&](auto* out, auto get) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (std::size_t k = 0; k < nloc; ++k) {
        const auto* src = get(grids.grids[perm[k]]);
        T* dst = out + k * static_cast<std::size_t>(cells);
        if constexpr (std::is_same_v<T, std::remove_cv_t<std::remove_pointer_t<decltype(src)>>>) {
          if (h == 0) {  // no halo, same type: the interior is one contiguous block
            std::memcpy(dst, src, static_cast<std::size_t>(cells) * sizeof(T));
            continue;
          }
        }
        for (int z = 0; z < blk.sz; ++z)
          for (int y = 0; y < blk.sy; ++y) {
            const auto* row = src + ((static_cast<std::size_t>(z + h) * py + (y + h)) * px + h);
            for (int x = 0; x < blk.sx; ++x) *dst++ = static_cast<T>(row[x]);
          }
      }
    };
    auto pack = [&](std::size_t d, unsigned char* b) {
      if (direct[d]) return;  // written straight from the arrays
      const std::string& n = plan[d].path;
      auto fill_rows = [&](auto* out, auto get) {
        for (std::size_t k = 0; k < nloc; ++k) out[k] = get(k, grids.grids[perm[k]]);
      };
      if (n == "uid") fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.uid; });
      else if (n == "sort_key") fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.sort_key; });
      else if (n == "level") fill_rows(reinterpret_cast<std::int32_t*>(b), [](std::size_t, const GridRecord& g) { return static_cast<std::int32_t>(g.level); });
      else if (n == "rank") fill_rows(reinterpret_cast<std::int32_t*>(b), [&](std::size_t, const GridRecord&) { return static_cast<std::int32_t>(w.rank); });
      else if (n == "parent_uid") fill_rows(reinterpret_cast<std::uint64_t*>(b), [](std::size_t, const GridRecord& g) { return g.parent_uid; });
      else if (n == "parent_row") fill_rows(reinterpret_cast<std::int64_t*>(b), [&](std::size_t k, const GridRecord&) { return parent_row[k]; });
      else if (n == "child_uids") {
        auto* o = reinterpret_cast<std::uint64_t*>(b);
        for (std::size_t k = 0; k < nloc; ++k) {
          const auto& g = grids.grids[perm[k]];
          for (int j = 0; j < nc; ++j) o[k * nc + j] = j < static_cast<int>(g.child_uids.size()) ? g.child_uids[j] : kNoUid;
        }
      } else if (n == "child_rows") {
        if (!child_rows.empty()) std::memcpy(b, child_rows.data(), child_rows.size() * 8);
      } else if (n == "bounding_box") {
        auto* o = reinterpret_cast<double*>(b);
        for (std::size_t k = 0; k < nloc; ++k) std::copy_n(grids.grids[perm[k]].bbox.begin(), 6, o + 6 * k);
      } else if (n == "cell_type") {
        pack_cells(reinterpret_cast<std::uint8_t*>(b), [](const GridRecord& g) { return g.cell_type; });
      } else {
        const auto& f = info.fields[d - first_field];
        auto get = [&](const GridRecord& g) { return g.fields[static_cast<std::size_t>(f.slot)]; };
        if (f.float32) pack_cells(reinterpret_cast<float*>(b), get);
        else pack_cells(reinterpret_cast<double*>(b), get);
      }
    };
    auto half = [&](std::size_t d) { return buffer.data() + (pipelined ? (d % 2) * half_bytes : 0); };
    if (nloc > 0) pack(0, half(0));
    for (std::size_t d = 0; d < plan.size(); ++d) {
      const auto& p = plan[d];
      std::future<void> next;
      if (pipelined && nloc > 0 && d + 1 < plan.size())
        next = std::async(std::launch::async, pack, d + 1, half(d + 1));
      if (direct[d]) {
        const auto row_bytes = static_cast<std::int64_t>(p.per_row) * static_cast<std::int64_t>(p.elem_bytes);
        std::vector<detail::Piece> pieces(nloc);
        for (std::size_t k = 0; k < nloc; ++k) {
          const GridRecord& g = grids.grids[perm[k]];
          const void* src = p.path == "cell_type" ? static_cast<const void*>(g.cell_type)
                                                  : static_cast<const void*>(g.fields[static_cast<std::size_t>(info.fields[d - first_field].slot)]);
          pieces[k] = {src, row_of[k] * row_bytes, row_bytes};
        }
        // A halo'd array: its interior, gathered by MPI.
        const detail::InteriorType interior(blk.sx, blk.sy, blk.sz, h, p.elem_bytes == 1 ? MPI_UINT8_T : MPI_DOUBLE);
        for (auto& pc : pieces) pc.layout = interior.get();
        const std::string err = detail::write_pieces(direct_fh, w.comm, direct_at[d], pieces, w.opts.collective_transfer);
        if (next.valid()) next.get();
        if (!err.empty()) c.fail(ErrorKind::io, "write " + gpath + "/" + p.path + ": " + err);
        if (!w.opts.collective_transfer) all_collective = false;
      } else {
        h5::Dataspace fs(c.check(H5Dget_space(dsets[d]), "space"));
        h5::select_rows(c, fs, runs);
        hsize_t nelem = static_cast<hsize_t>(nloc) * static_cast<hsize_t>(p.per_row);
        h5::Dataspace ms(c.check(H5Screate_simple(1, &nelem, nullptr), "memory space"));
        if (nelem == 0) H5Sselect_none(ms);
        const herr_t status = H5Dwrite(dsets[d], p.mem_type, ms, fs, w.dxpl_coll, half(d));
        if (next.valid()) next.get();  // the helper must be done before any throw
        c.check_status(status, "write " + gpath + "/" + p.path);
        H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
        H5Pget_mpio_actual_io_mode(w.dxpl_coll, &mode);
        if (mode == H5D_MPIO_NO_COLLECTIVE) all_collective = false;
      }
#ifdef SYNC_FILE_RANGE_WRITE
      const haddr_t at = w.writeback_fd >= 0 && !node_runs.empty() ? H5Dget_offset(dsets[d]) : HADDR_UNDEF;
      if (at != HADDR_UNDEF) {
        ++writeback_datasets;
        const auto row_bytes = static_cast<off_t>(p.per_row) * static_cast<off_t>(p.elem_bytes);
        std::vector<std::pair<off_t, off_t>> ranges;
        for (const auto& r : node_runs)
          ranges.emplace_back(static_cast<off_t>(at) + static_cast<off_t>(r.start) * row_bytes,
                              static_cast<off_t>(r.count) * row_bytes);
        writeback = std::async(std::launch::async, [before = writeback, fd = w.writeback_fd, ranges = std::move(ranges)] {
                      if (before.valid()) before.wait();
                      for (const auto& [off, len] : ranges) ::sync_file_range(fd, off, len, SYNC_FILE_RANGE_WRITE);
                    }).share();
      }
#endif
      if (!pipelined && d + 1 < plan.size() && nloc > 0) pack(d + 1, half(d + 1));
    }
  });
  if (writeback.valid()) writeback.wait();  // advisory: a failed start is caught by the commit flush
  return_buffer(std::move(held), w.opts.keep_buffer);
  w.hook("data_written");

  // Views need every grid's level and box on rank 0 (collective gather, before commit).
  Topology view_topo;
  if (w.opts.write_views) {
    std::vector<int> cnt(static_cast<std::size_t>(w.size)), dsp(static_cast<std::size_t>(w.size));
    int n7 = static_cast<int>(nloc) * 7;
    MPI_Gather(&n7, 1, MPI_INT, cnt.data(), 1, MPI_INT, 0, w.comm);
    std::vector<double> mine7(nloc * 7), all7;
    for (std::size_t k = 0; k < nloc; ++k) {
      mine7[7 * k] = static_cast<double>(row_of[k]);
      std::copy_n(grids.grids[perm[k]].bbox.begin(), 6, &mine7[7 * k + 1]);
    }
    int tot = 0;
    if (w.rank == 0)
      for (int r = 0; r < w.size; ++r) {
        dsp[static_cast<std::size_t>(r)] = tot;
        tot += cnt[static_cast<std::size_t>(r)];
      }
    all7.resize(static_cast<std::size_t>(tot));
    MPI_Gatherv(mine7.data(), n7, MPI_DOUBLE, all7.data(), cnt.data(), dsp.data(), MPI_DOUBLE, 0, w.comm);
    if (w.rank == 0) {
      view_topo.n_grids = n_grids;
      view_topo.bbox.resize(static_cast<std::size_t>(n_grids));
      view_topo.level_offsets.assign(level_start.begin(), level_start.begin() + n_levels + 1);
      for (std::size_t i = 0; i + 7 <= all7.size(); i += 7)
        std::copy_n(&all7[i + 1], 6, view_topo.bbox[static_cast<std::size_t>(all7[i])].begin());
      view_topo.level.resize(static_cast<std::size_t>(n_grids));
      for (int l = 0; l < n_levels; ++l)
        for (std::int64_t r = level_start[l]; r < level_start[l + 1]; ++r) view_topo.level[static_cast<std::size_t>(r)] = l;
    }
  }

  // ---- 6. crash protocol: flush -> committed marker + index row -> flush ----
  phase(w.comm, w.path, [&] {
    if (w.opts.flush_on_commit) w.flush();
  });
  w.hook("flushed");
  phase(w.comm, w.path, [&] {
    h5::rewrite_attr_u8(c, step_group, "committed", 1);
    h5::Dataset idx(c.check(H5Dopen2(w.file, names::kIndex, H5P_DEFAULT), "open index"));
    auto d = h5::dims(c, idx, "index");
    hsize_t n = d.empty() ? 0 : d[0];
    hsize_t n1 = n + 1;
    c.check_status(H5Dset_extent(idx, &n1), "extend index");
    h5::Dataspace fs(c.check(H5Dget_space(idx), "index space"));
    hsize_t one = w.rank == 0 ? 1 : 0;
    h5::Dataspace ms(c.check(H5Screate_simple(1, &one, nullptr), "space"));
    if (w.rank == 0) {
      hsize_t start = n, cnt = 1;
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, nullptr, &cnt, nullptr);
    } else {
      H5Sselect_none(fs);
      H5Sselect_none(ms);
    }
    detail::IndexRow row{info.step, info.time, info.dt, static_cast<std::uint8_t>(info.kind), 1,
                         n_grids, n_levels, bytes_global};
    h5::Datatype t = detail::index_type(c);
    c.check_status(H5Dwrite(idx, t, ms, fs, w.dxpl_coll, &row), "append index row");
  });
  w.hook("marked");
  phase(w.comm, w.path, [&] {
    dsets.clear();
    step_group.reset();
    if (w.opts.flush_on_commit) w.flush();
  });
  w.last_step = info.step;
  const double t1 = MPI_Wtime();
  w.hook("committed");

  WriteStats st;
  st.n_grids = n_grids;
  st.bytes = bytes_global;
  st.bytes_local = bytes_local;
  st.buffer_bytes = static_cast<std::int64_t>(buffer_bytes);
  st.buffer_reused = buffer_reused;
  st.writeback_datasets = writeback_datasets;
  st.direct_datasets = direct_datasets;
  double dt = t1 - t0;
  MPI_Allreduce(&dt, &st.seconds, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  st.bandwidth = st.seconds > 0 ? static_cast<double>(bytes_global) / st.seconds : 0.0;
  int coll = all_collective ? 1 : 0, coll_all = 1;
  MPI_Allreduce(&coll, &coll_all, 1, MPI_INT, MPI_MIN, w.comm);
  st.all_collective = coll_all == 1 && n_grids > 0;

  // ---- 7. derived view (rank 0; a failure here never affects the committed step) ----
  if (w.opts.write_views && w.rank == 0 && n_grids > 0) {
    try {
      StepEntry e;
      e.step = info.step;
      e.time = info.time;
      e.dt = info.dt;
      e.kind = info.kind;
      e.committed = true;
      e.n_grids = n_grids;
      e.n_levels = n_levels;
      e.group = gpath;
      std::vector<FieldInfo> fields;
      for (const auto& f : info.fields)
        if (f.group == "cell_data") fields.push_back({f.group, f.name, f.float32});
      write_step_view(w.path, w.common, e, view_topo, fields);
    } catch (const std::exception& ex) {
      st.view_error = ex.what();
    }
  }
  return st;
}

void release_kept_write_buffer() {
  std::lock_guard<std::mutex> lock(kept_mutex);
  kept_buffer.reset();
}

}  // namespace rwd::kernel
