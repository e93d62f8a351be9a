// Every MPI-IO hint and HDF5 setting the kernel uses, in one documented table.
//
// Defaults suit one shared file written by all ranks with one collective write per
// dataset (docs/file-format.md, "Options"). options_table() returns the same table
// as text, for `--help`-style output and for docs. Only what a user chooses: what the
// launcher or a test gives a Writer besides is WriterEnv (writer.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace rwd::kernel {

/// Who writes a step (IoOptions::strategy; docs/file-format.md §4): the same file either way.
enum class Strategy { automatic, collective, independent, aggregated, dedicated };
/// How a step's cell datasets are stored (IoOptions::compression: none or a lossless
/// filter; IoOptions::visualisation_compression: none or zfp).
enum class Codec { none, deflate, lz4, bitshuffle, zfp };
/// The option's text, as the table, case files, the file's attributes and logs spell it:
/// "auto", "collective", "independent", "aggregated", "dedicated".
const char* to_string(Strategy s) noexcept;
/// "none", "deflate", "lz4", "bitshuffle", "zfp".
const char* to_string(Codec c) noexcept;
/// The value spelt `text` (to_string's), or false.
bool parse(const std::string& text, Strategy& out) noexcept;
bool parse(const std::string& text, Codec& out) noexcept;

struct IoOptions {
  // --- MPI-IO hints (MPI_Info passed with H5Pset_fapl_mpio; empty = do not set) ---
  std::string romio_cb_write = "automatic";  ///< collective buffering (two-phase) on writes;
                                            ///< "automatic" means "enable" with zero_copy_halo
  std::string romio_cb_read = "automatic";   ///< collective buffering on reads
  std::int64_t cb_buffer_size = 16 << 20;  ///< bytes per aggregator buffer; 0 = MPI default
  int cb_nodes = 0;                        ///< number of aggregators; 0 = MPI default
  std::string romio_ds_write = "disable";  ///< data sieving on writes (needs locks; off)
  std::string romio_ds_read = "automatic"; ///< data sieving on reads
  // --- HDF5 file access ---
  bool file_locking = false;               ///< flock on open; off: each rank owns its region
                                           ///< and MPI-IO takes no lock anyway
  std::int64_t alignment_threshold = 1 << 20;  ///< objects >= this many bytes ...
  std::int64_t alignment = 1 << 20;            ///< ... start at a multiple of this (stripe)
  std::int64_t meta_block_size = 1 << 20;      ///< aggregate small metadata allocations
  bool coll_metadata_write = true;         ///< flush metadata with one collective write
  bool all_coll_metadata_ops = false;      ///< collective metadata reads: known-broken in
                                           ///< HDF5 1.10.5-1.10.8 (Debian), off by default
  bool libver_v18 = true;                  ///< libver bounds (V18, V18): HDF5 1.8 readers,
                                           ///< checksummed metadata
  // --- HDF5 dataset creation (every dataset is contiguous) ---
  bool fill_never = true;                  ///< H5D_FILL_TIME_NEVER: no fill writes
  bool alloc_early = true;                 ///< H5D_ALLOC_TIME_EARLY (parallel default)
  // --- transfer ---
  bool collective_transfer = true;         ///< H5FD_MPIO_COLLECTIVE for every data write/read
  // --- strategy: who writes (docs/file-format.md §4; the same file either way) ---
  Strategy strategy = Strategy::automatic;  ///< "auto": every rank writes its rows; a dataset
                                           ///< whose row runs are long on average (>= 64 KiB,
                                           ///< the usual case: one run per rank and level)
                                           ///< with independent transfers, short runs and
                                           ///< filtered datasets collectively (ROMIO's
                                           ///< romio_cb_write = automatic, per dataset);
                                           ///< "collective": every rank writes its rows in
                                           ///< one collective transfer per dataset;
                                           ///< "independent": the same rows, independent
                                           ///< transfers; "aggregated": one rank per node
                                           ///< gathers its node's grids (shared memory) and
                                           ///< the node leaders write collectively;
                                           ///< "dedicated": the compute ranks hand each step
                                           ///< to I/O ranks (io_ranks.hpp) and go on at once
  std::int64_t steps_in_flight = 1;        ///< dedicated: steps a compute rank may have handed
                                           ///< off and not yet written (shared memory holds
                                           ///< this many copies of the rank's step); when all
                                           ///< are in flight, the next output waits
  std::int64_t io_ranks_per_node = 1;      ///< dedicated: processes per node the launcher
                                           ///< takes as I/O ranks (rewind run)
  // --- write pipeline ---
  bool pipeline = true;                    ///< pack dataset d+1 on a helper thread while
                                           ///< dataset d is written (two halves of the linear
                                           ///< buffer). Needs MPI_THREAD_FUNNELED or more (the
                                           ///< helper makes no MPI/HDF5 call) and is skipped
                                           ///< when two halves would exceed the rank's data.
  bool zero_copy = true;                   ///< grids without halo whose arrays hold the file's
                                           ///< element type: write each rank's rows straight
                                           ///< from the arrays (MPI-IO memory type over them),
                                           ///< no pack into the linear buffer
  bool zero_copy_halo = false;             ///< zero copy for halo'd arrays too: an MPI subarray
                                           ///< type gathers each interior (no linear buffer for
                                           ///< cell data; same speed in page cache, ~5 % slower
                                           ///< durable than pack + pipeline here, so off).
                                           ///< Needs collective_transfer (packs otherwise).
  bool keep_buffer = true;                 ///< keep the linear buffer (and the statistics'
                                           ///< messages) for the next step (one per process;
                                           ///< release_kept_write_buffer())
  bool early_writeback = true;             ///< durable steps on Linux: after each dataset, a
                                           ///< helper starts writeback of this rank's bytes
                                           ///< (sync_file_range), so the disk works while the
                                           ///< next dataset is packed; the commit flush then
                                           ///< waits only for the tail
  // --- integrity ---
  bool checksums = true;                   ///< store an XXH3-64 hash of every row of every
                                           ///< dataset (format 1.4), computed while the row is
                                           ///< cache-hot; readers verify what they read
  bool statistics = true;                  ///< store per-grid statistics of the cell_data fields
                                           ///< (format 1.9: min, max, detail; docs/file-format.md
                                           ///< §3) and their per-octant shares of the parents'
                                           ///< details (format 1.10, where the block allows),
                                           ///< taken while the data go to the disk
  bool spare_cpus = true;                  ///< a rank bound to one CPU hashes its zero-copy rows
                                           ///< on a helper thread pinned to an online CPU that
                                           ///< no rank of the writer's communicator on this node
                                           ///< is bound to, in step with the write (the hash then
                                           ///< costs the write nothing); off, or without such a
                                           ///< CPU, it hashes each chunk just before writing it
  // --- compression (format 1.5; docs/file-format.md §4, "Compression") ---
  Codec compression = Codec::none;         ///< lossless filter of every step's cell datasets
                                           ///< (cell_type, fields): "none" (contiguous, zero
                                           ///< copy), "deflate" (shuffle + deflate), "lz4"
                                           ///< (HDF5 filter 32004, a plugin), "bitshuffle"
                                           ///< (filter 32008 with LZ4, a plugin). Compressed
                                           ///< datasets are chunked, written by HDF5's
                                           ///< collective filtered writes (no zero copy, no
                                           ///< early writeback for them); needs collective_transfer
  std::int64_t compression_level = 4;      ///< deflate level, 1 (fast) ... 9 (small)
  std::int64_t chunk_grids = 16;           ///< grids per chunk of a compressed dataset
  Codec visualisation_compression = Codec::none;  ///< "none" or "zfp": error-bounded lossy
                                           ///< compression (H5Z-ZFP's filter 32013, fixed
                                           ///< accuracy) of visualisation steps' fields only;
                                           ///< checkpoints are never lossy
  double zfp_accuracy = 0.0;               ///< zfp's absolute error bound: |x - x~| <= it for
                                           ///< every value; must be > 0 with zfp. Recorded on
                                           ///< each zfp dataset (attribute zfp_accuracy)
  // --- crash protocol ---
  bool flush_on_commit = true;             ///< flush after /common, then per step flush ->
                                           ///< committed marker -> flush. Turning it off (no
                                           ///< flush before close) is for page-cache benchmarks
                                           ///< ONLY: a crash can then lose the whole file.
  // --- derived outputs ---
  bool write_views = true;                 ///< rank 0 writes the VTKHDF view + .hdf.series
                                           ///< after each committed step
};

/// One row of the documented options table.
struct OptionDoc {
  std::string name, default_value, meaning;
  std::string type;  ///< "bool", "int" (bytes or counts, in [min, max]), "number" (> 0 when set)
                     ///< or "string" (one of `choices`)
  std::vector<std::string> choices;  ///< the values a string option takes
  std::int64_t min = 0, max = INT64_MAX;  ///< an int option's range
};
/// The options table with the defaults of `IoOptions{}`.
std::vector<OptionDoc> options_table();

/// A value for set_option: the table's type for that name.
using OptionValue = std::variant<bool, std::int64_t, std::string, double>;
/// Sets the option `name` (a name of options_table()). Throws std::invalid_argument
/// with one line naming the option and what is wrong (unknown name, wrong type, a
/// negative size, a hint that is not enable/disable/automatic).
void set_option(IoOptions& options, const std::string& name, const OptionValue& value);
/// set_option from text, as a case file's or a C caller's value reads: "true"/"false" for
/// a bool, an integer ("MPI default" = 0) for an int, a number, or one of a string
/// option's choices. Throws std::invalid_argument with one line naming the option.
void set_option_text(IoOptions& options, const std::string& name, const std::string& text);
/// The current value of option `name` as the table prints it ("true", "4096", "MPI
/// default" for a 0 size, a hint string). Throws std::invalid_argument for an unknown name.
std::string option_string(const IoOptions& options, const std::string& name);

/// What is wrong with the options taken together, or "" — one line naming the option:
/// compression without collective_transfer, zfp without a positive zfp_accuracy, a filter
/// that the HDF5 library cannot load (a missing plugin: "lz4" needs Debian's
/// hdf5-filter-plugin, "bitshuffle" Debian's bitshuffle). Not collective; loads plugins.
/// Writer::create / append refuse such options before they write anything.
std::string options_problem(const IoOptions& options);

}  // namespace rwd::kernel
