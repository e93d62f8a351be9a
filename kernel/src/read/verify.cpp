// Reader's checks of a file's integrity: a step's rows against their checksums
// (verify_step, `rewind verify`) and the index against the step groups (check_index).
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "integrity/checksum.hpp"
#include "format/format.hpp"
#include "read/reader_state.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::kernel {

using h5::Ctx;
namespace names = fmt_names;

namespace {
// Rows of dataset `name` of step `e` that do not match column `col` of `sums`.
std::int64_t verify_column(const detail::ReaderState& r, const StepEntry& e, hid_t g, const detail::StepChecksums& sums,
                           std::size_t col, Reader::Verification& v) {
  const Ctx& c = r.ctx;
  const std::string& name = sums.datasets()[col];
  const h5::Dataset d = h5::open_dataset(c, g, name);
  const h5::Datatype file_type(c.check(H5Dget_type(d), "type of " + name, ErrorKind::corrupt));
  const h5::Datatype mem_type(c.check(H5Tget_native_type(file_type, H5T_DIR_ASCEND), "type of " + name));
  const auto dims = h5::dims(c, d, name);
  if (dims.empty() || dims[0] != static_cast<hsize_t>(e.n_grids))
    c.fail(ErrorKind::bad_shape, e.group + "/" + name + " does not have one row per grid");
  std::size_t row_bytes = H5Tget_size(mem_type);
  for (std::size_t k = 1; k < dims.size(); ++k) row_bytes *= dims[k];
  // Stored little-endian: on a big-endian host the native copy would hash differently.
  if (H5Tget_order(mem_type) != H5T_ORDER_LE && H5Tget_size(mem_type) > 1)
    c.fail(ErrorKind::invalid_argument, "verifying checksums needs a little-endian host");
  const std::int64_t chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>((std::size_t{64} << 20) / row_bytes));
  std::vector<unsigned char> buf;
  std::int64_t bad = 0;
  for (std::int64_t r0 = 0; r0 < e.n_grids; r0 += chunk) {
    const std::int64_t n = std::min(chunk, e.n_grids - r0);
    buf.resize(static_cast<std::size_t>(n) * row_bytes);
    h5::Dataspace fs(c.check(H5Dget_space(d), "space"));
    h5::select_rows(c, fs, {{r0, n}});
    const hsize_t count = buf.size() / H5Tget_size(mem_type);
    h5::Dataspace ms(c.check(H5Screate_simple(1, &count, nullptr), "memory space"));
    c.check_status(H5Dread(d, mem_type, ms, fs, H5P_DEFAULT, buf.data()), "read " + e.group + "/" + name,
                   ErrorKind::corrupt);
    for (std::int64_t i = 0; i < n; ++i) {
      ++v.rows;
      if (detail::hash_bytes(buf.data() + static_cast<std::size_t>(i) * row_bytes, row_bytes) ==
          sums.at(r0 + i, static_cast<int>(col)))
        continue;
      ++bad;
      v.problems.push_back(detail::checksum_mismatch(e.group, name, r0 + i));
    }
  }
  return bad;
}
}  // namespace

Reader::Verification Reader::verify_step(std::int64_t step_number) const {
  const Impl& r = *impl_;
  const Ctx& c = r.ctx;
  const StepEntry e = step(step_number, true);
  const h5::Group g = h5::open_group(c, r.file, e.group);
  Verification v;
  // What cannot be read is damage of that dataset: reported, and the others still checked.
  const auto checked = [&](const std::string& dataset, auto f) {
    try {
      f();
    } catch (const FileError& err) {
      if (err.kind() == ErrorKind::invalid_argument) throw;
      v.damaged.push_back({dataset, 0, err.problem()});
    }
  };
  detail::StepChecksums sums;
  checked("checksums", [&] { sums = detail::StepChecksums::read(c, g, e.n_grids); });
  if (sums.empty() && (v.damaged.empty())) v.uncovered.emplace_back("row checksums");
  v.datasets = static_cast<std::int64_t>(sums.datasets().size());
  for (std::size_t col = 0; col < sums.datasets().size(); ++col) {
    const std::string& name = sums.datasets()[col];
    checked(name, [&] {
      if (const auto bad = verify_column(r, e, g, sums, col, v); bad > 0)
        v.damaged.push_back({name, bad,
                             bad == 1 ? std::string("1 row does not match its checksum")
                                      : fmt::format("{} rows do not match their checksums", bad)});
    });
  }
  // The topology as a restart and a window read it (level_offsets, links), its damage
  // named after the dataset read_topology names, and once: a row already reported above
  // stops read_topology again.
  checked("level_offsets", [&] {
    if (!h5::has_attr(h5::open_dataset(c, g, "level_offsets"), h5::kWholeChecksum))
      v.uncovered.emplace_back("level_offsets");
    (void)read_level_offsets(step_number);
  });
  try {
    (void)read_topology(step_number);
  } catch (const FileError& err) {
    if (err.kind() == ErrorKind::invalid_argument) throw;
    const std::string& p = err.problem();
    const std::string prefix = e.group + "/";
    const std::string name = p.rfind(prefix, 0) == 0
                                 ? p.substr(prefix.size(), p.find_first_of(": ", prefix.size()) - prefix.size())
                                 : "topology";
    if (std::none_of(v.damaged.begin(), v.damaged.end(), [&](const auto& d) { return d.dataset == name; }))
      v.damaged.push_back({name, 0, p});
  }
  return v;
}

std::vector<Reader::IndexProblem> Reader::check_index() const {
  const Impl& r = *impl_;
  const Ctx& c = r.ctx;
  std::vector<IndexProblem> out;
  std::vector<detail::IndexRow> rows;
  try {
    rows = detail::read_index(c, r.file);
  } catch (const FileError& e) {
    return {{-1, std::string(names::kIndex) + ": " + e.problem()}};
  }
  // The step groups as Reader::steps reads them, keeping why one could not be read.
  std::map<std::int64_t, StepEntry> groups;
  std::map<std::int64_t, FileError> unreadable;
  for (auto& s : detail::list_steps(c, r.file, r.common.block.cells(), detail::witnessed_flags(r))) {
    const std::int64_t number = std::strtoll(s.entry.group.c_str() + s.entry.group.rfind('_') + 1, nullptr, 10);
    if (s.unreadable) unreadable.emplace(number, *s.unreadable);
    else groups.emplace(number, std::move(s.entry));
  }
  std::map<std::int64_t, int> listed;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& x = rows[i];
    const auto say = [&](const std::string& what) {
      out.push_back({x.step, fmt::format("index row {}: {}", i, what)});
    };
    if (++listed[x.step] == 2) say(fmt::format("step {} is listed twice", x.step));
    if (x.committed != 1)
      say(fmt::format("step {} is not marked committed (only committed steps are indexed)", x.step));
    if (const auto u = unreadable.find(x.step); u != unreadable.end()) {
      say(fmt::format("step {} is listed as committed, but its group cannot be read ({})", x.step,
                      u->second.problem()));
      continue;
    }
    const auto it = groups.find(x.step);
    if (it == groups.end()) {
      say(fmt::format("step {} is listed, but the file has no such step", x.step));
      continue;
    }
    const StepEntry& s = it->second;
    if (!s.committed) say(fmt::format("step {} is listed as committed, but its group says it is not", x.step));
    // Bit for bit (a flipped low bit of a time is a denormal, which a build may compare as 0).
    const auto differs = [&](const char* what, auto index_value, auto step_value) {
      static_assert(sizeof index_value == sizeof step_value);
      // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bit for bit, on purpose (above)
      if (std::memcmp(&index_value, &step_value, sizeof index_value) != 0)
        say(fmt::format("step {}: {} = {} in the index, {} in the step", x.step, what, index_value, step_value));
    };
    differs("time", x.time, s.time);
    differs("dt", x.dt, s.dt);
    differs("kind", int{x.kind}, static_cast<int>(s.kind));
    differs("n_grids", x.n_grids, s.n_grids);
    differs("n_levels", x.n_levels, std::int64_t{s.n_levels});
    differs("bytes", x.bytes, s.bytes);
  }
  // The last committed step may lack its row when it is after every listed step: a writer
  // stopped between the commit's marker and its index row (docs/file-format.md §5), which
  // Writer::append completes. Any other unlisted committed step is damage.
  const std::int64_t last_listed = listed.empty() ? -1 : listed.rbegin()->first;
  std::int64_t lagging = -1;
  for (const auto& [number, s] : groups)
    if (s.committed) lagging = listed.count(number) == 0 && number > last_listed ? number : -1;
  for (const auto& [number, s] : groups)
    if (s.committed && listed.count(number) == 0 && number != lagging)
      out.push_back({number, fmt::format("step {} is committed but not in the index", number)});
  for (const auto& [number, e] : unreadable)
    if (listed.count(number) == 0 && e.kind() != ErrorKind::missing_object)
      out.push_back({number, fmt::format("step {}: its group cannot be read ({})", number, e.problem())});
  return out;
}

}  // namespace rwd::kernel
