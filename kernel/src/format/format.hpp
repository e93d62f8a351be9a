// Private: names of every object in the file and the /common reader/writer shared by
// Writer and Reader. docs/file-format.md is the contract these implement.
#pragma once
#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "io/h5util.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/metadata.hpp"
#include "rewind/kernel/options.hpp"

namespace rwd::kernel::fmt_names {
inline constexpr const char* kCommon = "/common";
inline constexpr const char* kSimulation = "/simulation";
inline constexpr const char* kIndex = "/simulation/index";
inline constexpr int kMaxLevels = 64;  // 6 level bits in Rewind's UID
}  // namespace rwd::kernel::fmt_names

namespace rwd::kernel::detail {

/// "step_00000042"
std::string step_group_name(std::int64_t step);
/// "/simulation/step_00000042"
std::string step_group_path(std::int64_t step);

/// File access property list. comm == MPI_COMM_NULL: serial sec2 driver.
h5::Plist make_fapl(const h5::Ctx& c, MPI_Comm comm, const IoOptions& o);
/// Dataset creation list: contiguous, fill never, early allocation (per options).
h5::Plist make_dcpl(const h5::Ctx& c, const IoOptions& o);

/// Writes root attributes and /common (collective in parallel: all ranks, same data).
void write_header(const h5::Ctx& c, hid_t file, const CommonInfo& common, hid_t dxpl, bool i_write);
/// Validates root attributes (format, version) and reads /common. Throws not_rewind,
/// newer_version, missing_object, bad_shape.
CommonInfo read_header(const h5::Ctx& c, hid_t file, int* major, int* minor);

/// Index row, in memory.
struct IndexRow {
  std::int64_t step;
  double time;
  double dt;
  std::uint8_t kind;
  std::uint8_t committed;
  std::int64_t n_grids;
  std::int64_t n_levels;
  std::int64_t bytes;
};
/// The index row's memory type; `kind_enum`: its kind an HDF5 enum (visualisation = 0,
/// checkpoint = 1, base u8; format 1.7), else a bare u8 (files before 1.7).
h5::Datatype index_type(const h5::Ctx& c, bool kind_enum = true);
/// index_type matching the stored type of an open /simulation/index (HDF5 converts no
/// integer to an enum or back): what reads it, and appends to a file before 1.7.
h5::Datatype index_type_of(const h5::Ctx& c, hid_t index);

/// Opens a file serially, read-only, classifying failures (not_found, not_hdf5,
/// truncated, corrupt). With `missing`, a file shorter than its metadata says (a copy cut
/// short, a writer killed while the file grew) is opened all the same and *missing set
/// to the bytes it lacks at its end (0 for a whole file): what lies there reads as zeros,
/// so the checksums of the steps that reach into it fail and name them, and the others
/// read as ever.
h5::File open_readonly_serial(const std::string& path, std::int64_t* missing = nullptr);
/// Lets a file access list open a truncated file (HDF5's skip_eof_check, as h5clear sets it).
void skip_eof_check(const h5::Ctx& c, hid_t fapl);

/// Reads a step entry from a step group's attributes.
StepEntry read_step_entry(const h5::Ctx& c, hid_t file, const std::string& group_name, std::int64_t cells_per_grid);

/// Every row of /simulation/index. Throws FileError when the index cannot be read.
std::vector<IndexRow> read_index(const h5::Ctx& c, hid_t file);

/// A step group of /simulation as the crash protocol reads it (docs/file-format.md §5).
struct ListedStep {
  StepEntry entry;  ///< as read; for a group that cannot be read: step (from its name), group and damage
  std::optional<FileError> unreadable;  ///< why the group cannot be read
};
/// Every step group, ascending by step, each with entry.damage set when the index (the
/// second witness) lists it as committed but its group cannot be read, or, from format
/// 1.7 (`flag_witnessed`: the row follows the flag in a flush of its own), says it is not
/// committed. An unreadable index witnesses nothing (check_index reports it). Local.
std::vector<ListedStep> list_steps(const h5::Ctx& c, hid_t file, std::int64_t cells_per_grid, bool flag_witnessed);

}  // namespace rwd::kernel::detail
