#include <fmt/core.h>

#include "rewind/kernel/options.hpp"

namespace rwd::kernel {

std::vector<OptionDoc> options_table() {
  const IoOptions d;
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  auto n = [](std::int64_t v) { return v == 0 ? std::string("MPI default") : std::to_string(v); };
  return {
      {"romio_cb_write", d.romio_cb_write, "MPI-IO hint: collective buffering (two-phase I/O) on writes"},
      {"romio_cb_read", d.romio_cb_read, "MPI-IO hint: collective buffering on reads"},
      {"cb_buffer_size", n(d.cb_buffer_size), "MPI-IO hint: bytes per aggregator buffer"},
      {"cb_nodes", n(d.cb_nodes), "MPI-IO hint: number of aggregators (~ OSTs or nodes)"},
      {"romio_ds_write", d.romio_ds_write, "MPI-IO hint: data sieving on writes (needs file locks)"},
      {"romio_ds_read", d.romio_ds_read, "MPI-IO hint: data sieving on reads"},
      {"file_locking", b(d.file_locking), "H5Pset_file_locking: flock on open (each rank owns its rows)"},
      {"alignment_threshold", n(d.alignment_threshold), "H5Pset_alignment threshold (bytes)"},
      {"alignment", n(d.alignment), "H5Pset_alignment: start large objects at stripe multiples"},
      {"meta_block_size", n(d.meta_block_size), "H5Pset_meta_block_size: aggregate metadata"},
      {"coll_metadata_write", b(d.coll_metadata_write), "H5Pset_coll_metadata_write: one collective metadata flush"},
      {"all_coll_metadata_ops", b(d.all_coll_metadata_ops), "H5Pset_all_coll_metadata_ops: broken in HDF5 1.10.5-1.10.8"},
      {"libver_v18", b(d.libver_v18), "H5Pset_libver_bounds(V18, V18): readable by HDF5 1.8, checksummed metadata"},
      {"fill_never", b(d.fill_never), "H5Pset_fill_time(NEVER): no fill-value writes"},
      {"alloc_early", b(d.alloc_early), "H5Pset_alloc_time(EARLY): allocate at creation"},
      {"collective_transfer", b(d.collective_transfer), "H5Pset_dxpl_mpio(COLLECTIVE) for bulk data"},
      {"pipeline", b(d.pipeline), "pack the next dataset on a helper thread while one is written (needs MPI_THREAD_FUNNELED)"},
      {"keep_buffer", b(d.keep_buffer), "keep the linear write buffer mapped for the next step (one per process)"},
      {"early_writeback", b(d.early_writeback), "durable steps: start writeback of each dataset's bytes (sync_file_range) as soon as it is written"},
      {"flush_on_commit", b(d.flush_on_commit), "crash protocol flush -> marker -> flush (benchmarks only: off)"},
      {"write_views", b(d.write_views), "rank 0 writes VTKHDF view + .hdf.series per committed step"},
  };
}

}  // namespace rwd::kernel
