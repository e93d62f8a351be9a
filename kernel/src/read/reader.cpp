// Reader: open a Rewind file, list and select steps, list a step's fields; the kernel's
// small read helpers. The reads have a file each: read_topology.cpp (the tree's rows),
// read_cells.cpp (cell data), verify.cpp (checksums and the index); their shared state is
// reader_state.hpp.
#include "rewind/kernel/reader.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "io/collective.hpp"
#include "compression/compression.hpp"
#include "format/format.hpp"
#include "read/reader_state.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::kernel {

using h5::Ctx;

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

Reader Reader::open(const std::string& path) {
  detail::register_filters();  // compressed datasets (format 1.5)
  auto im = std::make_unique<Impl>();
  im->path = path;
  im->ctx = Ctx{path};
  im->file = detail::open_readonly_serial(path, &im->missing);
  im->common = detail::read_header(im->ctx, im->file, &im->major, &im->minor);
  im->dxpl = h5::Plist(H5Pcreate(H5P_DATASET_XFER));
  return Reader(std::move(im));
}

Reader Reader::open(const std::string& path, MPI_Comm comm) {
  h5::silence_errors();
  detail::register_filters();
  auto im = std::make_unique<Impl>();
  im->path = path;
  im->ctx = Ctx{path};
  im->comm = mpi::Comm::dup(comm, "rewind kernel");
  Impl& r = *im;
  detail::phase(r.comm, path, [&] {
    // Classify bad files with a serial probe first (stat, signature, truncation).
    h5::File probe = detail::open_readonly_serial(path, &r.missing);
    probe.close();
  });
  detail::phase(r.comm, path, [&] {
    IoOptions o;
    h5::Plist fapl = detail::make_fapl(r.ctx, r.comm, o);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    if (r.missing > 0) detail::skip_eof_check(r.ctx, fapl);
    r.file = h5::File(
        r.ctx.check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "HDF5 cannot open the file", ErrorKind::corrupt));
  });
  detail::phase(r.comm, path, [&] { r.common = detail::read_header(r.ctx, r.file, &r.major, &r.minor); });
  r.dxpl = h5::Plist(H5Pcreate(H5P_DATASET_XFER));
  H5Pset_dxpl_mpio(r.dxpl, H5FD_MPIO_COLLECTIVE);
  r.dxpl_indep = h5::Plist(H5Pcreate(H5P_DATASET_XFER));
  H5Pset_dxpl_mpio(r.dxpl_indep, H5FD_MPIO_INDEPENDENT);
  return Reader(std::move(im));
}

const std::string& Reader::path() const { return impl_->path; }
const CommonInfo& Reader::common() const { return impl_->common; }
std::pair<int, int> Reader::format_version() const { return {impl_->major, impl_->minor}; }
std::int64_t Reader::bytes_missing() const { return impl_->missing; }

std::vector<StepEntry> Reader::steps(bool committed_only) const {
  std::vector<StepEntry> out;
  for (auto& s :
       detail::list_steps(impl_->ctx, impl_->file, impl_->common.block.cells(), detail::witnessed_flags(*impl_)))
    if (!committed_only || s.entry.committed) out.push_back(std::move(s.entry));
  return out;
}

std::vector<StepEntry> Reader::selectable_steps() const {
  std::vector<StepEntry> out = steps(false);
  std::erase_if(out, [](const StepEntry& e) { return !e.committed && e.damage.empty(); });
  return out;
}

StepEntry Reader::step(std::int64_t step_number, bool allow_uncommitted) const {
  // The group named after the number first: one step's attributes instead of every
  // step's, so reading step N of a long run (a restart, a time slider) does not cost
  // O(steps). Anything unusual (no such group, a half-created one, a name that does not
  // match its step attribute) falls back to the full listing, which decides as before.
  const Ctx& c = impl_->ctx;
  if (step_number >= 0 && h5::exists(impl_->file, detail::step_group_path(step_number))) {
    try {
      StepEntry e =
          detail::read_step_entry(c, impl_->file, detail::step_group_name(step_number), impl_->common.block.cells());
      if (e.step == step_number && (e.committed || allow_uncommitted)) return e;
    } catch (const FileError& e) {
      // A group without attributes is a writer killed while creating it: not committed. One
      // HDF5 cannot read is damaged, which "no committed step" would hide.
      if (e.kind() != ErrorKind::missing_object)
        c.fail(ErrorKind::corrupt, fmt::format("step {}: its group cannot be read ({})", step_number, e.problem()));
    }
  }
  for (const auto& e : steps(false)) {
    if (e.step != step_number) continue;
    if (!e.damage.empty()) c.fail(ErrorKind::corrupt, fmt::format("step {} is damaged: {}", e.step, e.damage));
    if (e.committed || allow_uncommitted) return e;
  }
  impl_->ctx.fail(ErrorKind::no_such_step,
                  fmt::format("no {}step {}", allow_uncommitted ? "" : "committed ", step_number));
}

StepEntry Reader::find_step(const std::string& sel) const {
  char* end = nullptr;
  const long long s = std::strtoll(sel.c_str(), &end, 10);
  if (!sel.empty() && sel[0] != '#' && *end == '\0' && end != sel.c_str()) return step(s);  // one step's attributes
  return select_step(selectable_steps(), sel, impl_->path);
}

std::vector<FieldInfo> Reader::fields(std::int64_t step_number) const {
  const Ctx& c = impl_->ctx;
  StepEntry e = step(step_number, true);
  h5::Group g = h5::open_group(c, impl_->file, e.group);
  std::vector<FieldInfo> out;
  for (const auto& n : h5::list_links(c, g)) {
    H5O_info_t oi;
    if (n == kStatistics || n == kShares) continue;  // per-grid statistics and shares, no cells
    if (H5Oget_info_by_name2(g, n.c_str(), &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP) continue;
    h5::Group sub = h5::open_group(c, g, n);
    for (const auto& v : h5::list_links(c, sub)) {
      h5::Dataset d = h5::open_dataset(c, sub, v);
      h5::Datatype t(H5Dget_type(d));
      out.push_back({n, v, H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == 4});
    }
  }
  return out;
}

Reader::Storage Reader::cell_data_storage(std::int64_t step_number) const {
  const Ctx& c = impl_->ctx;
  h5::Group g = h5::open_group(c, impl_->file, step(step_number, true).group);
  Storage out;
  for (const auto& f : fields(step_number)) {
    h5::Dataset d = h5::open_dataset(c, g, f.group + "/" + f.name);
    const h5::Datatype t(H5Dget_type(d));
    const h5::Dataspace sp(H5Dget_space(d));
    out.data += H5Sget_simple_extent_npoints(sp) * static_cast<std::int64_t>(H5Tget_size(t));
    out.stored += static_cast<std::int64_t>(H5Dget_storage_size(d));
  }
  return out;
}

std::vector<std::int64_t> partition_rows(const StepTopology& topo, int rank, int nranks) {
  std::vector<std::int64_t> rows;
  for (int l = 0; l + 1 < static_cast<int>(topo.level_offsets.size()); ++l) {
    const std::int64_t a = topo.level_offsets[l], n = topo.level_offsets[l + 1] - a;
    const std::int64_t lo = a + n * rank / nranks, hi = a + n * (rank + 1) / nranks;
    for (std::int64_t r = lo; r < hi; ++r) rows.push_back(r);
  }
  return rows;
}

namespace {
template <typename T>
void unpack(const T* packed, const BlockShape& b, int h, T* padded) {
  const int px = b.sx + 2 * h, py = b.sy + 2 * h;
  for (int z = 0; z < b.sz; ++z)
    for (int y = 0; y < b.sy; ++y)
      std::memcpy(padded + ((static_cast<std::size_t>(z + h) * py + (y + h)) * px + h),
                  packed + (static_cast<std::size_t>(z) * b.sy + y) * b.sx, sizeof(T) * static_cast<std::size_t>(b.sx));
}
}  // namespace

void unpack_interior(const double* packed, const BlockShape& b, int h, double* padded) { unpack(packed, b, h, padded); }
void unpack_interior(const std::uint8_t* packed, const BlockShape& b, int h, std::uint8_t* padded) {
  unpack(packed, b, h, padded);
}

CommonInfo make_branch_common(const Reader& parent, std::int64_t parent_step, const std::vector<std::string>& changes) {
  return make_branch_common(parent, parent.step(parent_step), changes);
}

CommonInfo make_branch_common(const Reader& parent, const StepEntry& e, const std::vector<std::string>& changes) {
  CommonInfo cm = parent.common();
  char buf[PATH_MAX];
  cm.lineage.parent_file = ::realpath(parent.path().c_str(), buf) ? std::string(buf) : parent.path();
  cm.lineage.parent_step = e.step;
  cm.lineage.parent_time = e.time;
  cm.lineage.changes = changes;
  cm.code_version = kKernelVersion;
  return cm;
}

}  // namespace rwd::kernel
