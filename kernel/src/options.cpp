#include <fmt/core.h>

#include <stdexcept>

#include "rewind/kernel/options.hpp"

namespace rwd::kernel {

namespace {
constexpr const char* kStrategies[] = {"collective", "independent", "aggregated", "dedicated"};

// One entry per IoOptions field: the name the table, case files and set_option() use,
// the field, and its meaning. Every string option but `strategy` is an MPI-IO hint;
// cb_nodes is the one size kept as an int.
using Field = std::variant<bool IoOptions::*, std::int64_t IoOptions::*, int IoOptions::*, std::string IoOptions::*>;
struct Entry {
  const char* name;
  Field field;
  const char* meaning;
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
    {"coll_metadata_write", &IoOptions::coll_metadata_write, "H5Pset_coll_metadata_write: one collective metadata flush"},
    {"all_coll_metadata_ops", &IoOptions::all_coll_metadata_ops, "H5Pset_all_coll_metadata_ops: broken in HDF5 1.10.5-1.10.8"},
    {"libver_v18", &IoOptions::libver_v18, "H5Pset_libver_bounds(V18, V18): readable by HDF5 1.8, checksummed metadata"},
    {"fill_never", &IoOptions::fill_never, "H5Pset_fill_time(NEVER): no fill-value writes"},
    {"alloc_early", &IoOptions::alloc_early, "H5Pset_alloc_time(EARLY): allocate at creation"},
    {"collective_transfer", &IoOptions::collective_transfer, "H5Pset_dxpl_mpio(COLLECTIVE) for bulk data"},
    {"strategy", &IoOptions::strategy, "who writes: collective | independent | aggregated (a writer per node) | dedicated (I/O ranks)"},
    {"steps_in_flight", &IoOptions::steps_in_flight, "dedicated: steps a compute rank may hand off before it waits for its I/O rank"},
    {"io_ranks_per_node", &IoOptions::io_ranks_per_node, "dedicated: processes per node that become I/O ranks"},
    {"pipeline", &IoOptions::pipeline, "pack the next dataset on a helper thread while one is written (needs MPI_THREAD_FUNNELED)"},
    {"zero_copy", &IoOptions::zero_copy, "halo-free arrays of the file's type: write rows straight from them (no pack, no buffer)"},
    {"zero_copy_halo", &IoOptions::zero_copy_halo, "zero copy for halo'd arrays too (MPI subarray types; saves the linear buffer)"},
    {"keep_buffer", &IoOptions::keep_buffer, "keep the linear write buffer mapped for the next step (one per process)"},
    {"early_writeback", &IoOptions::early_writeback, "durable steps: start writeback of each dataset's bytes (sync_file_range) as soon as it is written"},
    {"checksums", &IoOptions::checksums, "store a checksum (XXH3-64) per grid row and dataset; restarts and windows verify them"},
    {"flush_on_commit", &IoOptions::flush_on_commit, "crash protocol flush -> marker -> flush (benchmarks only: off)"},
    {"write_views", &IoOptions::write_views, "rank 0 writes VTKHDF view + .hdf.series per committed step"},
};

const Entry& entry(const std::string& name) {
  for (const auto& e : kEntries)
    if (name == e.name) return e;
  throw std::invalid_argument(fmt::format("unknown I/O option '{}'", name));
}

const char* type_of(const Field& f) {
  if (std::holds_alternative<bool IoOptions::*>(f)) return "bool";
  if (std::holds_alternative<std::string IoOptions::*>(f)) return "string";
  return "int";
}

template <typename T>
T as(const std::string& name, const OptionValue& v, const char* want) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw std::invalid_argument(fmt::format("I/O option '{}' must be {}", name, want));
}
std::int64_t minimum_of(const std::string& name) {
  return name == "steps_in_flight" || name == "io_ranks_per_node" ? 1 : 0;
}
std::int64_t size_of(const std::string& name, const OptionValue& v) {
  const auto n = as<std::int64_t>(name, v, "an integer");
  if (minimum_of(name) > 0 && n < minimum_of(name))
    throw std::invalid_argument(fmt::format("I/O option '{}' must be at least {}", name, minimum_of(name)));
  if (n < 0) throw std::invalid_argument(fmt::format("I/O option '{}' must not be negative (0 = MPI default)", name));
  return n;
}
std::string hint_of(const std::string& name, const OptionValue& v) {
  auto h = as<std::string>(name, v, "a string");
  if (name == "strategy") {
    for (const char* s : kStrategies)
      if (h == s) return h;
    throw std::invalid_argument(fmt::format(
        "I/O option 'strategy' must be \"collective\", \"independent\", \"aggregated\" or \"dedicated\", not \"{}\"", h));
  }
  if (h != "enable" && h != "disable" && h != "automatic" && !h.empty())
    throw std::invalid_argument(
        fmt::format("I/O option '{}' must be \"enable\", \"disable\" or \"automatic\" (\"\" = not set), not \"{}\"", name, h));
  return h;
}
}  // namespace

std::vector<OptionDoc> options_table() {
  const IoOptions d;
  std::vector<OptionDoc> out;
  for (const auto& e : kEntries)
    out.push_back({e.name, option_string(d, e.name), e.meaning, type_of(e.field), minimum_of(e.name)});
  return out;
}

void set_option(IoOptions& o, const std::string& name, const OptionValue& v) {
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, bool>) o.*member = as<bool>(name, v, "true or false");
        else if constexpr (std::is_same_v<T, std::string>) o.*member = hint_of(name, v);
        else o.*member = static_cast<T>(size_of(name, v));
      },
      entry(name).field);
}

std::string option_string(const IoOptions& o, const std::string& name) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = o.*member;
        using T = std::remove_cv_t<std::remove_reference_t<decltype(value)>>;
        if constexpr (std::is_same_v<T, bool>) return value ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return value;
        else return value == 0 ? std::string("MPI default") : std::to_string(value);
      },
      entry(name).field);
}

}  // namespace rwd::kernel
