// Handing steps to the rank that writes them: the wire, the shared-memory slots, packing,
// and the compute side (Forwarder). The writing side is io_ranks.cpp.
#include "forward.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

#include "rewind/kernel/options.hpp"
#include "rewind/mpi/message.hpp"

namespace rwd::kernel::detail {

// --- wire ------------------------------------------------------------------------------

void Packer::put(const std::string& s) {
  put(static_cast<std::uint64_t>(s.size()));
  append(s.data(), s.size());
}
void Packer::put(const std::vector<std::string>& v) {
  put(static_cast<std::uint64_t>(v.size()));
  for (const auto& s : v) put(s);
}
void Packer::put(const std::vector<double>& v) {
  put(static_cast<std::uint64_t>(v.size()));
  for (double d : v) put(d);
}
void Packer::put(const std::vector<std::uint64_t>& v) {
  put(static_cast<std::uint64_t>(v.size()));
  for (auto d : v) put(d);
}
void Packer::put(const CommonInfo& c) {
  put(c.dim);
  put(c.block);
  put(c.refinement);
  put(c.max_children);
  put(c.domain);
  for (const auto* m : {&c.time_stepping, &c.fluid}) {
    put(static_cast<std::uint64_t>(m->size()));
    for (const auto& [k, v] : *m) {
      put(k);
      put(v);
    }
  }
  put(static_cast<std::uint64_t>(c.variables.size()));
  for (const auto& v : c.variables) {
    put(v.name);
    put(v.unit);
  }
  put(c.case_text);
  put(c.code_version);
  put(c.creator);
  put(c.lineage.parent_file);
  put(c.lineage.parent_file_absolute);
  put(c.lineage.parent_step);
  put(c.lineage.parent_time);
  put(c.lineage.changes);
}
void Packer::put(const IoOptions& o) {  // by the options table: every documented option
  const auto table = options_table();
  put(static_cast<std::uint64_t>(table.size()));
  for (const auto& row : table) {
    put(row.name);
    put(option_string(o, row.name));
  }
}
void Packer::put(const std::vector<FieldSpec>& fields) {
  put(static_cast<std::uint64_t>(fields.size()));
  for (const auto& f : fields) {
    put(f.group);
    put(f.name);
    put(f.slot);
    put(static_cast<std::uint8_t>(f.float32));
  }
}
void Packer::put(const StepInfo& s) {
  put(s.step);
  put(s.time);
  put(s.dt);
  put(s.kind);
  put(s.fields);
  put(static_cast<std::uint8_t>(s.write_cell_type));
  put(s.case_overrides);
  put(s.monitor_state);
}
void Packer::put(const FileError& e) {
  put(e.kind());
  put(e.file());
  put(e.problem());
  put(e.detail());
}

const std::byte* Unpacker::take(std::size_t n) {
  if (at_ + n > b_.size()) throw FileError(ErrorKind::io, "", "I/O ranks: a message is shorter than its contents");
  const std::byte* p = b_.data() + at_;
  at_ += n;
  return p;
}
std::string Unpacker::string() {
  const auto n = get<std::uint64_t>();
  const auto* p = reinterpret_cast<const char*>(take(n));
  return {p, p + n};
}
std::vector<std::string> Unpacker::strings() {
  std::vector<std::string> v(get<std::uint64_t>());
  for (auto& s : v) s = string();
  return v;
}
std::vector<double> Unpacker::doubles() {
  std::vector<double> v(get<std::uint64_t>());
  for (auto& d : v) d = get<double>();
  return v;
}
std::vector<std::uint64_t> Unpacker::uids() {
  std::vector<std::uint64_t> v(get<std::uint64_t>());
  for (auto& d : v) d = get<std::uint64_t>();
  return v;
}
CommonInfo Unpacker::common() {
  CommonInfo c;
  c.dim = get<int>();
  c.block = get<BlockShape>();
  c.refinement = get<int>();
  c.max_children = get<int>();
  c.domain = get<Box>();
  for (auto* m : {&c.time_stepping, &c.fluid})
    for (auto n = get<std::uint64_t>(); n > 0; --n) {
      std::string k = string();
      (*m)[k] = get<double>();
    }
  c.variables.resize(get<std::uint64_t>());
  for (auto& v : c.variables) {
    v.name = string();
    v.unit = string();
  }
  c.case_text = string();
  c.code_version = string();
  c.creator = string();
  c.lineage.parent_file = string();
  c.lineage.parent_file_absolute = string();
  c.lineage.parent_step = get<std::int64_t>();
  c.lineage.parent_time = get<double>();
  c.lineage.changes = strings();
  return c;
}
IoOptions Unpacker::options() {
  IoOptions o;
  const auto table = options_table();
  for (auto n = get<std::uint64_t>(); n > 0; --n) {
    const std::string name = string(), value = string();
    const auto row = std::find_if(table.begin(), table.end(), [&](const OptionDoc& d) { return d.name == name; });
    if (row == table.end()) continue;  // both sides run the same binary; tolerate anyway
    set_option_text(o, name, value);
  }
  return o;
}
std::vector<FieldSpec> Unpacker::fields() {
  std::vector<FieldSpec> v(get<std::uint64_t>());
  for (auto& f : v) {
    f.group = string();
    f.name = string();
    f.slot = get<int>();
    f.float32 = get<std::uint8_t>() != 0;
  }
  return v;
}
StepInfo Unpacker::step() {
  StepInfo s;
  s.step = get<std::int64_t>();
  s.time = get<double>();
  s.dt = get<double>();
  s.kind = get<StepKind>();
  s.fields = fields();
  s.write_cell_type = get<std::uint8_t>() != 0;
  s.case_overrides = strings();
  s.monitor_state = doubles();
  return s;
}
FileError Unpacker::error() {
  const auto kind = get<ErrorKind>();
  std::string file = string(), problem = string(), detail = string();
  return {kind, std::move(file), std::move(problem), std::move(detail)};
}

void send_command(MPI_Comm group, int server, Packer& msg) {
  mpi::check(MPI_Send(msg.bytes().data(), static_cast<int>(msg.bytes().size()), MPI_BYTE, server, kCommandTag, group),
             "I/O ranks", "MPI_Send");
}

// --- shared memory -----------------------------------------------------------------------

void SharedSlots::allocate(MPI_Comm group, std::int64_t bytes) {
  release();
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each segment on its owner's NUMA node
  void* base = nullptr;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, group, &base, &win_);
  MPI_Info_free(&info);
  mpi::check(rc, "I/O ranks", "MPI_Win_allocate_shared");
  mine_ = static_cast<std::byte*>(base);
  // Passive target for the whole life of the window: MPI_Win_sync orders the copies into
  // a segment before the message that announces them (the separate-model rules).
  mpi::check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "I/O ranks", "MPI_Win_lock_all");
}

void SharedSlots::release() {
  if (win_ == MPI_WIN_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }
  win_ = MPI_WIN_NULL;
  mine_ = nullptr;
}

std::byte* SharedSlots::of(int r) const {
  MPI_Aint size = 0;
  int disp = 0;
  void* base = nullptr;
  mpi::check(MPI_Win_shared_query(win_, r, &size, &disp, &base), "I/O ranks", "MPI_Win_shared_query");
  return static_cast<std::byte*>(base);
}

void SharedSlots::sync() const {
  if (win_ != MPI_WIN_NULL) MPI_Win_sync(win_);
}

// --- packing -------------------------------------------------------------------------------

namespace {

/// Copies the interior of a padded array (x fastest) into `dst`.
template <typename T>
void copy_interior(const T* src, T* dst, BlockShape b, int h) {
  if (h == 0) {  // the interior is the whole array
    std::memcpy(dst, src, static_cast<std::size_t>(b.cells()) * sizeof(T));
    return;
  }
  const auto sx = static_cast<std::size_t>(b.sx), px = sx + 2 * static_cast<std::size_t>(h);
  const auto py = static_cast<std::size_t>(b.sy + 2 * h), hh = static_cast<std::size_t>(h);
  for (std::size_t z = 0; z < static_cast<std::size_t>(b.sz); ++z)
    for (std::size_t y = 0; y < static_cast<std::size_t>(b.sy); ++y, dst += sx)
      std::memcpy(dst, src + ((z + hh) * py + y + hh) * px + hh, sx * sizeof(T));
}

/// Cells of one array in a slot: the block, with `h` halo layers on every side.
std::int64_t shipped_cells(BlockShape b, int h) {
  return static_cast<std::int64_t>(b.sx + 2 * h) * (b.sy + 2 * h) * (b.sz + 2 * h);
}

std::int64_t type_offset(std::size_t slots, std::size_t grids, std::int64_t cells) {
  return static_cast<std::int64_t>(slots * grids) * cells * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace

namespace {
/// Some array of `grids` starts in [begin, end).
bool points_into(const LocalGrids& grids, const std::byte* begin, const std::byte* end) {
  const auto in = [&](const void* p) {
    const auto* b = static_cast<const std::byte*>(p);
    return p != nullptr && !std::less<const std::byte*>{}(b, begin) && std::less<const std::byte*>{}(b, end);
  };
  return std::any_of(grids.grids.begin(), grids.grids.end(), [&](const GridRecord& r) {
    return in(r.cell_type) || std::any_of(r.fields.begin(), r.fields.end(), in);
  });
}
}  // namespace

SlotLayout slot_layout(const StepInfo& info, bool write, const std::vector<FieldSpec>* consume) {
  SlotLayout l;
  if (write)
    for (const auto& f : info.fields) l.slots.push_back(f.slot);
  if (consume)
    for (const auto& f : *consume) l.slots.push_back(f.slot);
  std::sort(l.slots.begin(), l.slots.end());
  l.slots.erase(std::unique(l.slots.begin(), l.slots.end()), l.slots.end());
  l.padded = consume != nullptr;
  l.types = (write && info.write_cell_type) || consume != nullptr;
  return l;
}

std::int64_t slot_bytes(const SlotLayout& layout, const LocalGrids& grids) {
  const std::int64_t cells = shipped_cells(grids.block, layout.padded ? grids.halo : 0);
  const std::size_t n = grids.grids.size();
  return type_offset(layout.slots.size(), n, cells) + (layout.types ? static_cast<std::int64_t>(n) * cells : 0);
}

void pack_step(const SlotLayout& layout, const LocalGrids& grids, int rank, std::byte* slot, Packer& msg, bool copy) {
  const auto& slots = layout.slots;
  const int halo = layout.padded ? grids.halo : 0;  // shipped
  const std::int64_t cells = shipped_cells(grids.block, halo);
  const std::size_t n = grids.grids.size();
  // A padded array is copied whole (one memcpy); an interior is cut out of it.
  const auto copy_array = [&](const auto* src, auto* dst) {
    if (layout.padded) std::memcpy(dst, src, static_cast<std::size_t>(cells) * sizeof(*src));
    else copy_interior(src, dst, grids.block, grids.halo);
  };
  msg.put(grids.block);
  msg.put(halo);
  msg.put(rank);
  msg.put(static_cast<std::uint64_t>(n));
  msg.put(static_cast<std::uint64_t>(slots.size()));
  for (int s : slots) msg.put(s);
  auto* values = reinterpret_cast<double*>(slot);
  auto* types = reinterpret_cast<std::uint8_t*>(slot + type_offset(slots.size(), n, cells));
  for (std::size_t g = 0; g < n; ++g) {
    const GridRecord& r = grids.grids[g];
    msg.put(r.uid);
    msg.put(r.level);
    msg.put(r.sort_key);
    msg.put(r.bbox);
    msg.put(r.parent_uid);
    msg.put(r.child_uids);
    const bool has_type = layout.types && r.cell_type != nullptr;
    msg.put(static_cast<std::uint8_t>(has_type));
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const auto sl = static_cast<std::size_t>(slots[k]);
      // A missing array is the writer's error to report: send zeros, mark it absent.
      const bool present = sl < r.fields.size() && r.fields[sl] != nullptr;
      msg.put(static_cast<std::uint8_t>(present));
      if (present && copy) copy_array(r.fields[sl], values + (k * n + g) * static_cast<std::size_t>(cells));
    }
    if (has_type && copy) copy_array(r.cell_type, types + g * static_cast<std::size_t>(cells));
  }
}

LocalGrids slot_grids(const SlotLayout& layout, const LocalGrids& like, std::byte* slot) {
  const auto& slots = layout.slots;
  const std::size_t n = like.grids.size();
  const std::int64_t cells = shipped_cells(like.block, 0);
  auto* values = reinterpret_cast<double*>(slot);
  auto* types = reinterpret_cast<std::uint8_t*>(slot + type_offset(slots.size(), n, cells));
  const std::size_t width = slots.empty() ? 0 : static_cast<std::size_t>(slots.back()) + 1;
  LocalGrids out;
  out.block = like.block;
  out.halo = 0;
  out.grids.reserve(n);
  for (std::size_t g = 0; g < n; ++g) {
    GridRecord r = like.grids[g];
    r.fields.assign(width, nullptr);
    for (std::size_t k = 0; k < slots.size(); ++k)
      r.fields[static_cast<std::size_t>(slots[k])] = values + (k * n + g) * static_cast<std::size_t>(cells);
    r.cell_type = layout.types ? types + g * static_cast<std::size_t>(cells) : nullptr;
    out.grids.push_back(std::move(r));
  }
  return out;
}

void unpack_grids(Unpacker& msg, const std::byte* slot, LocalGrids& into) {
  const auto block = msg.get<BlockShape>();
  const auto halo = msg.get<int>();
  const auto rank = msg.get<int>();
  const auto n = static_cast<std::size_t>(msg.get<std::uint64_t>());
  std::vector<int> slots(static_cast<std::size_t>(msg.get<std::uint64_t>()));
  for (int& s : slots) s = msg.get<int>();
  into.block = block;
  into.halo = halo;  // every client of a step ships the same way
  const std::int64_t cells = shipped_cells(block, halo);
  const auto* values = reinterpret_cast<const double*>(slot);
  const auto* types = reinterpret_cast<const std::uint8_t*>(slot + type_offset(slots.size(), n, cells));
  const std::size_t width = slots.empty() ? 0 : static_cast<std::size_t>(slots.back()) + 1;
  for (std::size_t g = 0; g < n; ++g) {
    GridRecord r;
    r.uid = msg.get<std::uint64_t>();
    r.level = msg.get<int>();
    r.sort_key = msg.get<std::uint64_t>();
    r.bbox = msg.get<Box>();
    r.parent_uid = msg.get<std::uint64_t>();
    r.child_uids = msg.uids();
    const bool has_type = msg.get<std::uint8_t>() != 0;
    r.fields.assign(width, nullptr);
    for (std::size_t k = 0; k < slots.size(); ++k)
      if (msg.get<std::uint8_t>() != 0)
        r.fields[static_cast<std::size_t>(slots[k])] = values + (k * n + g) * static_cast<std::size_t>(cells);
    if (has_type) r.cell_type = types + g * static_cast<std::size_t>(cells);
    r.rank = rank;
    into.grids.push_back(std::move(r));
  }
}

// --- the compute side --------------------------------------------------------------------

Forwarder::Forwarder(MPI_Comm comm, bool append, const std::string& path, const CommonInfo* common,
                     const IoOptions& options, const WriterEnv& env)
    : comm_(mpi::Comm::dup(comm, "Writer")), path_(path) {
  if (options.strategy == Strategy::dedicated) {
    if (env.io_group == MPI_COMM_NULL)
      throw FileError(ErrorKind::invalid_argument, path,
                      "output.io.strategy = \"dedicated\" needs I/O ranks: run it with `rewind run` under mpirun, "
                      "which takes output.io.io_ranks_per_node processes per node for them");
    group_ = env.io_group;
    dedicated_ = true;
    MPI_Comm_rank(group_, &me_);
    int n = 0;
    MPI_Comm_size(group_, &n);
    server_ = n - 1;
  } else {  // aggregated: the node's first compute rank writes for the node
    node_ = mpi::Comm::split_shared(comm_, "Writer");
    me_ = node_.rank();
    leaders_ = mpi::Comm::split(comm_, me_ == 0 ? 0 : MPI_UNDEFINED, comm_.rank(), "Writer");
    group_ = node_;
    server_ = 0;
    if (me_ == 0) local_server_.emplace(node_, leaders_, true, nullptr, env.on_phase);
  }
  slots_ = std::max<std::int64_t>(1, options.steps_in_flight);
  Packer msg;
  msg.put(Op::open);
  msg.put(static_cast<std::uint8_t>(append));
  msg.put(path);
  msg.put(common ? *common : CommonInfo{});
  msg.put(options);
  command(msg, true);
  const auto r = reply();
  Unpacker u(r);
  if (u.get<std::uint8_t>() == 0) throw u.error();
  last_step_ = u.get<std::int64_t>();
  common_ = u.common();
  open_ = true;
}

Forwarder::~Forwarder() {
  if (!open_) return;
  try {
    close();
  } catch (const std::exception& e) {
    // Every rank has the same error: one line, unless a step's error said it already.
    if (!failed_ && comm_.rank() == 0) std::fprintf(stderr, "rewind: closing %s: %s\n", path_.c_str(), e.what());
  }
}

void Forwarder::command(Packer& msg, bool wait) {
  if (!local_server_) {
    // Nonblocking: a step's description may be large, and the server may still be
    // writing the step before; the buffer lives until the step is settled.
    sends_.emplace_back(MPI_REQUEST_NULL, std::move(msg.bytes()));
    auto& [rq, bytes] = sends_.back();
    mpi::check(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, server_, kCommandTag, group_, &rq),
               "I/O ranks", "MPI_Isend");
    if (wait) complete_sends(sends_.size());
    return;
  }
  // This rank is its group's server too: the command goes to itself, then it serves it.
  MPI_Request rq;
  mpi::check(MPI_Isend(msg.bytes().data(), static_cast<int>(msg.bytes().size()), MPI_BYTE, me_, kCommandTag, group_, &rq),
             "I/O ranks", "MPI_Isend");
  local_server_->serve_one();
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

void Forwarder::complete_sends(std::size_t n) {
  for (; n > 0 && !sends_.empty(); --n) {
    MPI_Wait(&sends_.front().first, MPI_STATUS_IGNORE);
    sends_.pop_front();
  }
}

std::vector<std::byte> Forwarder::reply() {
  std::vector<std::byte> r;
  mpi::receive_message(server_, kReplyTag, group_, r, "I/O ranks");
  return r;
}

void Forwarder::settle_one(WriteStats* into) {
  const std::int64_t step = in_flight_.front();
  in_flight_.pop_front();
  complete_sends(1);  // that step's description
  const auto r = reply();
  Unpacker u(r);
  if (u.get<std::uint8_t>() == 0) {
    failed_ = true;
    const FileError e = u.error();
    const char* by = dedicated_ ? "the I/O ranks" : "the node's writing rank";
    // A failed write names its step already (detail::abandon_step): say who failed there.
    std::string problem = e.problem();
    const auto at = problem.find(") not written: ");
    if (problem.rfind(fmt::format("step {} (t = ", step), 0) == 0 && at != std::string::npos)
      problem.insert(at + 13, fmt::format(" by {}", by));
    else
      problem = fmt::format("step {} (written by {}): {}", step, by, problem);
    throw FileError(e.kind(), e.file(), problem, e.detail());
  }
  const auto written = u.get<std::int64_t>();
  const auto bytes = u.get<std::int64_t>();
  const auto seconds = u.get<double>();
  consumer_active_ = u.get<std::uint8_t>() != 0;
  if (into && written >= 0) {  // -1: a step for the consumer only
    into->written_step = written;
    into->written_seconds = seconds;
    into->written_bandwidth = seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0;
  }
}

WriteStats Forwarder::write_step(const StepInfo& info, const LocalGrids& grids) {
  return forward(info, grids, true, nullptr);
}

WriteStats Forwarder::hand_off(const StepInfo& info, const LocalGrids& grids, bool write,
                                const std::vector<FieldSpec>& consume) {
  if (!dedicated_) throw no_consumer(path_);
  return forward(info, grids, write, &consume);
}

WriteStats Forwarder::forward(const StepInfo& info, const LocalGrids& grids, bool write,
                              const std::vector<FieldSpec>* consume) {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  // A span lent for this step (Writer::span) is taken as it is or dropped: either way this
  // hand-off ends it.
  const std::optional<Lent> lent = std::move(lent_);
  lent_.reset();
  WriteStats st = lent ? lent->waited : WriteStats{};
  st.handed_off = true;
  const double t0 = MPI_Wtime() - st.wait_seconds;
  // Room for this step: at most slots_ steps in flight (the same count on every rank, so
  // every rank settles, and throws, at the same call).
  while (static_cast<std::int64_t>(in_flight_.size()) >= slots_) settle_one(&st);
  const SlotLayout layout = slot_layout(info, write, consume);
  const std::int64_t need = slot_bytes(layout, grids);
  const bool from_span = lent && is_lent(*lent, layout, grids);
  // The span's arrays are in a slot already; a hand-off of other arrays that points into
  // it (a consumer's step, or one laid out otherwise) would copy the slot onto itself.
  const bool misused = lent && !from_span && points_into(grids, lent->begin, lent->end);
  // One reduction for the window decision and the step's totals: {ranks that must grow,
  // bytes, grids, ranks handing over a span, ranks handing a span over wrongly}.
  std::int64_t mine[5] = {need > slot_capacity_ ? 1 : 0, need, static_cast<std::int64_t>(grids.grids.size()),
                          from_span ? 1 : 0, misused ? 1 : 0};
  std::int64_t totals[5] = {0, 0, 0, 0, 0};
  MPI_Allreduce(mine, totals, 5, MPI_INT64_T, MPI_SUM, comm_);
  if (totals[4] != 0)
    throw FileError(ErrorKind::invalid_argument, path_,
                    fmt::format("step {}: a span (Writer::span) goes to the write_step of the step it was taken for, "
                                "with the same fields; not to a hand-off of other fields",
                                info.step));
  if (totals[0] != 0 && totals[3] != 0)  // a new window would drop the spans' contents
    throw FileError(ErrorKind::invalid_argument, path_,
                    fmt::format("step {}: a rank's step is larger than the span it was lent (Writer::span): "
                                "hand every rank's span to write_step, or none",
                                info.step));
  ensure_capacity(need, totals[0] != 0, &st);
  st.wait_seconds = MPI_Wtime() - t0;
  const std::int64_t offset = (next_slot_++ % slots_) * slot_capacity_;
  Packer msg;
  msg.put(Op::step);
  msg.put(offset);
  msg.put(static_cast<std::uint8_t>((write ? kWriteStep : 0) | (consume ? kConsumeStep : 0)));
  msg.put(info);
  msg.put(consume ? *consume : std::vector<FieldSpec>{});
  pack_step(layout, grids, comm_.rank(), window().mine() + offset, msg, !from_span);
  st.copied_bytes = from_span ? 0 : need;
  window().sync();
  command(msg, false);
  in_flight_.push_back(info.step);  // a step for the consumer only holds its slot too
  if (write) last_step_ = info.step;
  // Aggregated: the node leader writes the step inside this call (its command serves it),
  // so every rank of the node settles it now, the leader's error with the others: a rank
  // that settled later would compute on into a collective the failed ones have left.
  if (!dedicated_) settle_one(&st);

  double times[2] = {MPI_Wtime() - t0, st.wait_seconds}, most[2] = {0, 0};
  MPI_Allreduce(times, most, 2, MPI_DOUBLE, MPI_MAX, comm_);
  st.bytes_local = need;
  st.bytes = totals[1];
  st.n_grids = totals[2];
  st.seconds = most[0];
  st.wait_seconds = most[1];
  st.bandwidth = st.seconds > 0 ? static_cast<double>(st.bytes) / st.seconds : 0.0;
  return st;
}

LocalGrids Forwarder::span(const StepInfo& info, const LocalGrids& like) {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  lent_.reset();
  WriteStats waited;
  const double t0 = MPI_Wtime();
  while (static_cast<std::int64_t>(in_flight_.size()) >= slots_) settle_one(&waited);
  const SlotLayout layout = slot_layout(info, true, nullptr);
  const std::int64_t need = slot_bytes(layout, like);
  fit(need, &waited);
  waited.wait_seconds = MPI_Wtime() - t0;
  // The slot the next hand-off takes (hand_off's offset).
  std::byte* slot = window().mine() + (next_slot_ % slots_) * slot_capacity_;
  lent_ = Lent{layout, slot_grids(layout, like, slot), waited, slot, slot + need};
  return lent_->grids;
}

bool Forwarder::is_lent(const Lent& lent, const SlotLayout& layout, const LocalGrids& grids) {
  if (layout.slots != lent.layout.slots || layout.types != lent.layout.types || layout.padded || grids.halo != 0 ||
      grids.block != lent.grids.block || grids.grids.size() != lent.grids.grids.size())
    return false;
  for (std::size_t g = 0; g < grids.grids.size(); ++g) {
    const GridRecord &a = grids.grids[g], &b = lent.grids.grids[g];
    if (layout.types && a.cell_type != b.cell_type) return false;
    for (int s : layout.slots) {
      const auto i = static_cast<std::size_t>(s);
      if (i >= a.fields.size() || a.fields[i] != b.fields[i]) return false;
    }
  }
  return true;
}

bool Forwarder::fit(std::int64_t need, WriteStats* st) {
  std::int64_t grow = need > slot_capacity_ ? 1 : 0, any = 0;
  MPI_Allreduce(&grow, &any, 1, MPI_INT64_T, MPI_SUM, comm_);
  ensure_capacity(need, any != 0, st);
  return any != 0;
}

void Forwarder::ensure_capacity(std::int64_t need, bool grow_any, WriteStats* st) {
  if (!grow_any) return;
  // A new window for the group: nothing of the old one may be in flight, nor lent.
  while (!in_flight_.empty()) settle_one(st);
  lent_.reset();
  slot_capacity_ = std::max(slot_capacity_, need + need / 8 + 4096);  // room for a little growth
  Packer msg;
  msg.put(Op::resize);
  msg.put(slot_capacity_ * slots_);
  command(msg, true);
  if (!local_server_) own_window_.allocate(group_, slot_capacity_ * slots_);
  next_slot_ = 0;
}

void Forwarder::prepare(const StepInfo& info, const LocalGrids& grids, const std::vector<FieldSpec>* consume) {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  if (!dedicated_) consume = nullptr;  // only I/O ranks have a consumer
  // First touch now, not in the first hand-off's copy: fresh pages cost a fault each
  // (on a VM a host fault: bench/kernel/first_touch.cpp measures it), milliseconds per MiB.
  if (fit(slot_bytes(slot_layout(info, true, consume), grids), nullptr)) std::memset(window().mine(), 0, static_cast<std::size_t>(slot_capacity_ * slots_));
}

std::optional<FileError> Forwarder::settle_all() {
  std::optional<FileError> first;
  while (!in_flight_.empty()) {
    try {
      settle_one(nullptr);
    } catch (const FileError& e) {
      if (!first) first = e;
    }
  }
  return first;
}

void Forwarder::settle() {
  if (auto e = settle_all()) throw *e;
}

void Forwarder::close() {
  if (!open_) throw FileError(ErrorKind::invalid_argument, path_, "writer is closed");
  open_ = false;
  std::optional<FileError> first = settle_all();  // the last steps are written before the file closes
  Packer msg;
  msg.put(Op::close);
  command(msg, true);
  const auto r = reply();
  Unpacker u(r);
  if (u.get<std::uint8_t>() == 0 && !first) first = u.error();
  complete_sends(sends_.size());
  own_window_.release();  // the leader's window is its server's, released there
  if (first) throw *first;
}

}  // namespace rwd::kernel::detail
