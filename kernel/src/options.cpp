#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "compression/compression.hpp"
#include "rewind/kernel/options.hpp"

namespace rwd::kernel {

namespace {
// The options' spellings, indexed by the enums: the one place they are written.
constexpr const char* kStrategyNames[] = {"auto", "collective", "independent", "aggregated", "dedicated"};
constexpr const char* kCodecNames[] = {"none", "deflate", "lz4", "bitshuffle", "zfp"};

template <class E, std::size_t N>
bool parse_name(const char* const (&names)[N], const std::string& text, E& out) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (text == names[i]) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}
template <class E>
std::vector<std::string> spelt(std::initializer_list<E> values) {
  std::vector<std::string> out;
  for (const E v : values) out.emplace_back(to_string(v));
  return out;
}
}  // namespace

const char* to_string(Strategy s) noexcept { return kStrategyNames[static_cast<std::size_t>(s)]; }
const char* to_string(Codec c) noexcept { return kCodecNames[static_cast<std::size_t>(c)]; }
bool parse(const std::string& text, Strategy& out) noexcept { return parse_name(kStrategyNames, text, out); }
bool parse(const std::string& text, Codec& out) noexcept { return parse_name(kCodecNames, text, out); }

namespace {
// One entry per IoOptions field: the name the table, case files and set_option() use,
// the field, and its meaning; a string option's values (an MPI-IO hint's by default) and
// an int option's range. cb_nodes is the one size kept as an int.
// strategy and the codecs are strings in the table (their to_string spellings).
using Field = std::variant<bool IoOptions::*, std::int64_t IoOptions::*, int IoOptions::*, std::string IoOptions::*,
                           double IoOptions::*, Strategy IoOptions::*, Codec IoOptions::*>;
const std::vector<std::string> kHint = {"enable", "disable", "automatic"};
struct Entry {
  const char* name;
  Field field;
  const char* meaning;
  std::vector<std::string> choices = kHint;
  std::int64_t min = 0, max = INT64_MAX;
};

const Entry kEntries[] = {
    {"romio_cb_write", &IoOptions::romio_cb_write, "MPI-IO hint: collective buffering (two-phase I/O) on writes"},
    {"romio_cb_read", &IoOptions::romio_cb_read, "MPI-IO hint: collective buffering on reads"},
    {"cb_buffer_size", &IoOptions::cb_buffer_size, "MPI-IO hint: bytes per aggregator buffer"},
    {"cb_nodes", &IoOptions::cb_nodes, "MPI-IO hint: number of aggregators (~ OSTs or nodes)"},
    {"romio_ds_write", &IoOptions::romio_ds_write, "MPI-IO hint: data sieving on writes (needs file locks)"},
    {"romio_ds_read", &IoOptions::romio_ds_read, "MPI-IO hint: data sieving on reads"},
    {"file_locking", &IoOptions::file_locking, "H5Pset_file_locking: flock on open (each rank owns its rows)"},
    {"alignment_threshold", &IoOptions::alignment_threshold, "H5Pset_alignment threshold (bytes)"},
    {"alignment", &IoOptions::alignment, "H5Pset_alignment: start large objects at stripe multiples"},
    {"meta_block_size", &IoOptions::meta_block_size, "H5Pset_meta_block_size: aggregate metadata"},
    {"coll_metadata_write", &IoOptions::coll_metadata_write,
     "H5Pset_coll_metadata_write: one collective metadata flush"},
    {"all_coll_metadata_ops", &IoOptions::all_coll_metadata_ops,
     "H5Pset_all_coll_metadata_ops: broken in HDF5 1.10.5-1.10.8"},
    {"libver_v18", &IoOptions::libver_v18,
     "H5Pset_libver_bounds(V18, V18): readable by HDF5 1.8, checksummed metadata"},
    {"fill_never", &IoOptions::fill_never, "H5Pset_fill_time(NEVER): no fill-value writes"},
    {"alloc_early", &IoOptions::alloc_early, "H5Pset_alloc_time(EARLY): allocate at creation"},
    {"collective_transfer", &IoOptions::collective_transfer, "H5Pset_dxpl_mpio(COLLECTIVE) for bulk data"},
    {"strategy", &IoOptions::strategy,
     "who writes: auto (every rank; independent transfers for long row runs) | collective | independent | "
     "aggregated (a writer per node) | dedicated (I/O ranks)",
     spelt({Strategy::automatic, Strategy::collective, Strategy::independent, Strategy::aggregated,
            Strategy::dedicated})},
    {"steps_in_flight",
     &IoOptions::steps_in_flight,
     "dedicated: steps a compute rank may hand off before it waits for its I/O rank",
     {},
     1,
     INT64_MAX},
    {"io_ranks_per_node",
     &IoOptions::io_ranks_per_node,
     "dedicated: processes per node that become I/O ranks",
     {},
     1,
     INT64_MAX},
    {"pipeline", &IoOptions::pipeline,
     "pack the next dataset on a helper thread while one is written (needs MPI_THREAD_FUNNELED)"},
    {"zero_copy", &IoOptions::zero_copy,
     "halo-free arrays of the file's type: write rows straight from them (no pack, no buffer)"},
    {"zero_copy_halo", &IoOptions::zero_copy_halo,
     "zero copy for halo'd arrays too (MPI subarray types; saves the linear buffer)"},
    {"keep_buffer", &IoOptions::keep_buffer,
     "keep the linear write buffer and the statistics' messages for the next step (one per process)"},
    {"early_writeback", &IoOptions::early_writeback,
     "durable steps: start writeback of each dataset's bytes (sync_file_range) as soon as it is written"},
    {"checksums", &IoOptions::checksums,
     "store a checksum (XXH3-64) per grid row and dataset; restarts and windows verify them"},
    {"statistics", &IoOptions::statistics,
     "store each grid's min, max and detail of every cell_data variable (statistics/<var>, format 1.9) and, where "
     "each refined axis's cell count is divisible by 4, each grid's per-octant shares of its parent's detail "
     "(shares/<var>, format 1.10): what adaptive windows rank by and ranges read without the cells; taken while the "
     "step's data go to the disk (docs/benchmarks.md)"},
    {"spare_cpus", &IoOptions::spare_cpus,
     "a rank bound to one CPU hashes rows on a node CPU no rank is bound to, in step with the write"},
    {"compression", &IoOptions::compression,
     "lossless compression of cell datasets, chunked, collective filtered writes (lz4, bitshuffle: HDF5 plugins)",
     spelt({Codec::none, Codec::deflate, Codec::lz4, Codec::bitshuffle})},
    {"compression_level", &IoOptions::compression_level, "deflate level: 1 fast ... 9 small", {}, 1, 9},
    {"chunk_grids", &IoOptions::chunk_grids, "grids per chunk of a compressed dataset", {}, 1, INT64_MAX},
    {"visualisation_compression", &IoOptions::visualisation_compression,
     "lossy, error-bounded compression of visualisation fields (zfp: H5Z-ZFP filter 32013)",
     spelt({Codec::none, Codec::zfp})},
    {"zfp_accuracy", &IoOptions::zfp_accuracy, "zfp's absolute error bound (|x - x~| <= it), > 0 with zfp", {}},
    {"flush_on_commit", &IoOptions::flush_on_commit, "crash protocol flush -> marker -> flush (benchmarks only: off)"},
    {"write_views", &IoOptions::write_views, "rank 0 writes VTKHDF view + .hdf.series per committed step"},
};

const Entry& entry(const std::string& name) {
  for (const auto& e : kEntries)
    if (name == e.name) return e;
  throw std::invalid_argument(fmt::format("unknown I/O option '{}'", name));
}

bool is_text(const Field& f) {
  return std::holds_alternative<std::string IoOptions::*>(f) || std::holds_alternative<Strategy IoOptions::*>(f) ||
         std::holds_alternative<Codec IoOptions::*>(f);
}
const char* type_of(const Field& f) {
  if (std::holds_alternative<bool IoOptions::*>(f)) return "bool";
  if (is_text(f)) return "string";
  if (std::holds_alternative<double IoOptions::*>(f)) return "number";
  return "int";
}

template <typename T>
T as(const std::string& name, const OptionValue& v, const char* want) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw std::invalid_argument(fmt::format("I/O option '{}' must be {}", name, want));
}
std::int64_t size_of(const Entry& e, const OptionValue& v) {
  const auto n = as<std::int64_t>(e.name, v, "an integer");
  if (n < 0 && e.min == 0) throw std::invalid_argument(fmt::format("I/O option '{}' must not be negative (0 = MPI default)", e.name));
  if (n < e.min || n > e.max)
    throw std::invalid_argument(e.max == INT64_MAX ? fmt::format("I/O option '{}' must be at least {}, not {}", e.name, e.min, n)
                                                   : fmt::format("I/O option '{}' must be {} ... {}, not {}", e.name, e.min, e.max, n));
  return n;
}
std::string choice_of(const Entry& e, const OptionValue& v) {
  auto h = as<std::string>(e.name, v, "a string");
  if (std::string(e.name) == "compression" && h == "zfp")
    throw std::invalid_argument("I/O option 'compression' must be lossless (none, deflate, lz4, bitshuffle): zfp is "
                                "lossy, for visualisation steps only (visualisation_compression = \"zfp\")");
  const bool hint = e.choices == kHint;
  if (std::find(e.choices.begin(), e.choices.end(), h) == e.choices.end() && !(hint && h.empty()))
    throw std::invalid_argument(fmt::format("I/O option '{}' must be \"{}\"{}, not \"{}\"", e.name,
                                            fmt::join(e.choices, "\", \""), hint ? " (\"\" = not set)" : "", h));
  return h;
}
double number_of(const Entry& e, const OptionValue& v) {
  double x = 0;
  if (const auto* i = std::get_if<std::int64_t>(&v)) x = static_cast<double>(*i);
  else x = as<double>(e.name, v, "a number");
  if (!std::isfinite(x) || x < 0) throw std::invalid_argument(fmt::format("I/O option '{}' must be a number >= 0, not {}", e.name, x));
  return x;
}
}  // namespace

std::vector<OptionDoc> options_table() {
  const IoOptions d;
  std::vector<OptionDoc> out;
  for (const auto& e : kEntries) {
    const bool str = is_text(e.field);
    out.push_back({e.name, option_string(d, e.name), e.meaning, type_of(e.field), str ? e.choices : std::vector<std::string>{},
                   e.min, e.max});
  }
  return out;
}

void set_option(IoOptions& o, const std::string& name, const OptionValue& v) {
  const Entry& e = entry(name);
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, bool>) o.*member = as<bool>(name, v, "true or false");
        else if constexpr (std::is_same_v<T, std::string>) o.*member = choice_of(e, v);
        else if constexpr (std::is_enum_v<T>) parse(choice_of(e, v), o.*member);  // a choice: always parses
        else if constexpr (std::is_same_v<T, double>) o.*member = number_of(e, v);
        else o.*member = static_cast<T>(size_of(e, v));
      },
      e.field);
}

namespace {
// The whole of `text` as a T (std::stoll / std::stod), or nothing.
template <class T, class Parse>
std::optional<T> parse_all(const std::string& text, Parse parse) {
  std::size_t used = 0;
  T v{};
  try {
    v = parse(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size()) return std::nullopt;
  return v;
}
}  // namespace

void set_option_text(IoOptions& o, const std::string& name, const std::string& text) {
  const auto table = options_table();
  const auto row = std::find_if(table.begin(), table.end(), [&](const OptionDoc& d) { return d.name == name; });
  if (row == table.end()) {
    set_option(o, name, text);  // names the unknown option
    return;
  }
  const auto bad = [&](const char* what) {
    return std::invalid_argument(fmt::format("I/O option '{}': \"{}\" is not {}", name, text, what));
  };
  if (row->type == "bool") {
    if (text != "true" && text != "false") throw bad("true or false");
    set_option(o, name, text == "true");
  } else if (row->type == "int") {
    const auto v = text == "MPI default" ? std::optional<std::int64_t>(0)
                                         : parse_all<std::int64_t>(text, [](const std::string& t, std::size_t* n) { return std::stoll(t, n); });
    if (!v) throw bad("an integer");
    set_option(o, name, *v);
  } else if (row->type == "number") {
    const auto v = parse_all<double>(text, [](const std::string& t, std::size_t* n) { return std::stod(t, n); });
    if (!v) throw bad("a number");
    set_option(o, name, *v);
  } else {
    set_option(o, name, text);
  }
}

std::string option_string(const IoOptions& o, const std::string& name) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = o.*member;
        using T = std::remove_cv_t<std::remove_reference_t<decltype(value)>>;
        if constexpr (std::is_same_v<T, bool>) return value ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return value;
        else if constexpr (std::is_enum_v<T>) return to_string(value);
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{}", value);  // shortest exact form (it crosses the wire to I/O ranks)
        else return value == 0 ? std::string("MPI default") : std::to_string(value);
      },
      entry(name).field);
}

std::string options_problem(const IoOptions& o) {
  const bool zfp = o.visualisation_compression == Codec::zfp;
  const bool filters = o.compression != Codec::none || zfp;
  const char* filtered = zfp && o.compression == Codec::none ? "visualisation_compression" : "compression";
  if (filters && !o.collective_transfer)
    return fmt::format("I/O option '{}' needs collective_transfer = true (HDF5 writes filtered datasets in parallel "
                       "only collectively)", filtered);
  if (filters && o.strategy == Strategy::independent)
    return fmt::format("I/O option '{}' needs collective transfers, not strategy = \"independent\" (HDF5 writes "
                       "filtered datasets in parallel only collectively)", filtered);
  if (zfp && !(o.zfp_accuracy > 0))
    return "I/O option 'visualisation_compression' = \"zfp\" needs zfp_accuracy > 0 (the absolute error bound)";
  if (zfp) {
    const std::string why = detail::filter_unavailable(Codec::zfp);
    if (!why.empty()) return "I/O option 'visualisation_compression' = \"zfp\": " + why;
  }
  if (o.compression != Codec::none) {
    const std::string why = detail::filter_unavailable(o.compression);
    if (!why.empty()) return fmt::format("I/O option 'compression' = \"{}\": {}", to_string(o.compression), why);
  }
  return "";
}

}  // namespace rwd::kernel
