// The hand-off's wire (handoff_wire.hpp).
#include "write/forward/handoff_wire.hpp"

#include "rewind/kernel/options.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::kernel::detail {

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
  put(static_cast<std::uint64_t>(s.scalars.size()));
  for (const auto& x : s.scalars) {
    put(x.name);
    put(x.value);
  }
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
  c.domain = get<BoxRow>();
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
  s.scalars.resize(get<std::uint64_t>());
  for (auto& x : s.scalars) {
    x.name = string();
    x.value = get<double>();
  }
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

}  // namespace rwd::kernel::detail
