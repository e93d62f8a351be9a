#include <fmt/core.h>

#include <stdexcept>

#include "rewind/kernel/options.hpp"

namespace rwd::kernel {

std::vector<OptionDoc> options_table() {
  const IoOptions d;
  return {
      {"romio_cb_write", option_string(d, "romio_cb_write"), "MPI-IO hint: collective buffering (two-phase I/O) on writes", "string"},
      {"romio_cb_read", option_string(d, "romio_cb_read"), "MPI-IO hint: collective buffering on reads", "string"},
      {"cb_buffer_size", option_string(d, "cb_buffer_size"), "MPI-IO hint: bytes per aggregator buffer", "int"},
      {"cb_nodes", option_string(d, "cb_nodes"), "MPI-IO hint: number of aggregators (~ OSTs or nodes)", "int"},
      {"romio_ds_write", option_string(d, "romio_ds_write"), "MPI-IO hint: data sieving on writes (needs file locks)", "string"},
      {"romio_ds_read", option_string(d, "romio_ds_read"), "MPI-IO hint: data sieving on reads", "string"},
      {"file_locking", option_string(d, "file_locking"), "H5Pset_file_locking: flock on open (each rank owns its rows)", "bool"},
      {"alignment_threshold", option_string(d, "alignment_threshold"), "H5Pset_alignment threshold (bytes)", "int"},
      {"alignment", option_string(d, "alignment"), "H5Pset_alignment: start large objects at stripe multiples", "int"},
      {"meta_block_size", option_string(d, "meta_block_size"), "H5Pset_meta_block_size: aggregate metadata", "int"},
      {"coll_metadata_write", option_string(d, "coll_metadata_write"), "H5Pset_coll_metadata_write: one collective metadata flush", "bool"},
      {"all_coll_metadata_ops", option_string(d, "all_coll_metadata_ops"), "H5Pset_all_coll_metadata_ops: broken in HDF5 1.10.5-1.10.8", "bool"},
      {"libver_v18", option_string(d, "libver_v18"), "H5Pset_libver_bounds(V18, V18): readable by HDF5 1.8, checksummed metadata", "bool"},
      {"fill_never", option_string(d, "fill_never"), "H5Pset_fill_time(NEVER): no fill-value writes", "bool"},
      {"alloc_early", option_string(d, "alloc_early"), "H5Pset_alloc_time(EARLY): allocate at creation", "bool"},
      {"collective_transfer", option_string(d, "collective_transfer"), "H5Pset_dxpl_mpio(COLLECTIVE) for bulk data", "bool"},
      {"pipeline", option_string(d, "pipeline"), "pack the next dataset on a helper thread while one is written (needs MPI_THREAD_FUNNELED)", "bool"},
      {"keep_buffer", option_string(d, "keep_buffer"), "keep the linear write buffer mapped for the next step (one per process)", "bool"},
      {"early_writeback", option_string(d, "early_writeback"), "durable steps: start writeback of each dataset's bytes (sync_file_range) as soon as it is written", "bool"},
      {"flush_on_commit", option_string(d, "flush_on_commit"), "crash protocol flush -> marker -> flush (benchmarks only: off)", "bool"},
      {"write_views", option_string(d, "write_views"), "rank 0 writes VTKHDF view + .hdf.series per committed step", "bool"},
  };
}

namespace {
template <typename T>
T as(const std::string& name, const OptionValue& v, const char* want) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw std::invalid_argument(fmt::format("I/O option '{}' must be {}", name, want));
}
std::int64_t size_of(const std::string& name, const OptionValue& v) {
  const auto n = as<std::int64_t>(name, v, "an integer");
  if (n < 0) throw std::invalid_argument(fmt::format("I/O option '{}' must not be negative (0 = MPI default)", name));
  return n;
}
std::string hint_of(const std::string& name, const OptionValue& v) {
  auto h = as<std::string>(name, v, "a string");
  if (h != "enable" && h != "disable" && h != "automatic" && !h.empty())
    throw std::invalid_argument(
        fmt::format("I/O option '{}' must be \"enable\", \"disable\" or \"automatic\" (\"\" = not set), not \"{}\"", name, h));
  return h;
}
}  // namespace

void set_option(IoOptions& o, const std::string& name, const OptionValue& v) {
  auto b = [&](bool& field) { field = as<bool>(name, v, "true or false"); };
  if (name == "romio_cb_write") o.romio_cb_write = hint_of(name, v);
  else if (name == "romio_cb_read") o.romio_cb_read = hint_of(name, v);
  else if (name == "cb_buffer_size") o.cb_buffer_size = size_of(name, v);
  else if (name == "cb_nodes") o.cb_nodes = static_cast<int>(size_of(name, v));
  else if (name == "romio_ds_write") o.romio_ds_write = hint_of(name, v);
  else if (name == "romio_ds_read") o.romio_ds_read = hint_of(name, v);
  else if (name == "file_locking") b(o.file_locking);
  else if (name == "alignment_threshold") o.alignment_threshold = size_of(name, v);
  else if (name == "alignment") o.alignment = size_of(name, v);
  else if (name == "meta_block_size") o.meta_block_size = size_of(name, v);
  else if (name == "coll_metadata_write") b(o.coll_metadata_write);
  else if (name == "all_coll_metadata_ops") b(o.all_coll_metadata_ops);
  else if (name == "libver_v18") b(o.libver_v18);
  else if (name == "fill_never") b(o.fill_never);
  else if (name == "alloc_early") b(o.alloc_early);
  else if (name == "collective_transfer") b(o.collective_transfer);
  else if (name == "pipeline") b(o.pipeline);
  else if (name == "keep_buffer") b(o.keep_buffer);
  else if (name == "early_writeback") b(o.early_writeback);
  else if (name == "flush_on_commit") b(o.flush_on_commit);
  else if (name == "write_views") b(o.write_views);
  else throw std::invalid_argument(fmt::format("unknown I/O option '{}'", name));
}

std::string option_string(const IoOptions& o, const std::string& name) {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  auto n = [](std::int64_t v) { return v == 0 ? std::string("MPI default") : std::to_string(v); };
  if (name == "romio_cb_write") return o.romio_cb_write;
  if (name == "romio_cb_read") return o.romio_cb_read;
  if (name == "cb_buffer_size") return n(o.cb_buffer_size);
  if (name == "cb_nodes") return n(o.cb_nodes);
  if (name == "romio_ds_write") return o.romio_ds_write;
  if (name == "romio_ds_read") return o.romio_ds_read;
  if (name == "file_locking") return b(o.file_locking);
  if (name == "alignment_threshold") return n(o.alignment_threshold);
  if (name == "alignment") return n(o.alignment);
  if (name == "meta_block_size") return n(o.meta_block_size);
  if (name == "coll_metadata_write") return b(o.coll_metadata_write);
  if (name == "all_coll_metadata_ops") return b(o.all_coll_metadata_ops);
  if (name == "libver_v18") return b(o.libver_v18);
  if (name == "fill_never") return b(o.fill_never);
  if (name == "alloc_early") return b(o.alloc_early);
  if (name == "collective_transfer") return b(o.collective_transfer);
  if (name == "pipeline") return b(o.pipeline);
  if (name == "keep_buffer") return b(o.keep_buffer);
  if (name == "early_writeback") return b(o.early_writeback);
  if (name == "flush_on_commit") return b(o.flush_on_commit);
  if (name == "write_views") return b(o.write_views);
  throw std::invalid_argument(fmt::format("unknown I/O option '{}'", name));
}

}  // namespace rwd::kernel
