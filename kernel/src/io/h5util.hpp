// Private HDF5 helpers: a move-only handle, checked calls that turn the HDF5 error stack
// into a FileError, and small attribute/dataset helpers. Never included by public headers.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/grids.hpp"
#include "format/row_layout.hpp"

namespace rwd::kernel::h5 {

/// Silences HDF5's automatic error printing (once per process). Called by every entry point.
void silence_errors();

/// The current HDF5 error stack, folded into one line (outermost first), then cleared.
std::string error_stack();

/// Move-only owner of an HDF5 identifier, closed with Close.
template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() noexcept {
    if (id_ >= 0) Close(id_);  // destructors never throw: a failed close is ignored here
    id_ = H5I_INVALID_HID;
  }
  /// Closes now and reports failure (used where a close must be checked, e.g. files).
  herr_t close() noexcept {
    herr_t r = id_ >= 0 ? Close(id_) : 0;
    id_ = H5I_INVALID_HID;
    return r;
  }
  [[nodiscard]] hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: used as an hid_t in HDF5 calls
  [[nodiscard]] bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = Handle<&H5Fclose>;
using Group = Handle<&H5Gclose>;
using Dataset = Handle<&H5Dclose>;
using Dataspace = Handle<&H5Sclose>;
using Datatype = Handle<&H5Tclose>;
using Attribute = Handle<&H5Aclose>;
using Plist = Handle<&H5Pclose>;

/// Context for errors: the file path.
struct Ctx {
  std::string file;
  [[noreturn]] void fail(ErrorKind kind, const std::string& problem) const;
  /// Checks an hid_t result; on failure throws FileError(kind, problem, HDF5 stack) —
  /// FileError(no_space, "<problem>: No space left on device", stack) when the stack
  /// says the file system is full (detail::no_space_cause).
  hid_t check(hid_t id, const std::string& what, ErrorKind kind = ErrorKind::io) const;
  void check_status(herr_t status, const std::string& what, ErrorKind kind = ErrorKind::io) const;
};

// ---- writing helpers (all collective in parallel mode: every rank, same values) ----
void write_attr_string(const Ctx& c, hid_t obj, const char* name, const std::string& value);
void write_attr_i64(const Ctx& c, hid_t obj, const char* name, const std::vector<std::int64_t>& v);
/// Always a 1-D array of v.size() values (also for 1 or 0 values).
void write_attr_i64_array(const Ctx& c, hid_t obj, const char* name, const std::vector<std::int64_t>& v);
void write_attr_f64_array(const Ctx& c, hid_t obj, const char* name, const std::vector<double>& v);
void write_attr_f64(const Ctx& c, hid_t obj, const char* name, const std::vector<double>& v);
void write_attr_u8(const Ctx& c, hid_t obj, const char* name, std::uint8_t v);
void write_attr_u64(const Ctx& c, hid_t obj, const char* name, std::uint64_t v);
/// Overwrites an existing scalar uint8 attribute.
void rewrite_attr_u8(const Ctx& c, hid_t obj, const char* name, std::uint8_t v);
/// Small dataset of fixed-length strings (1-D), written by rank `writer` (collectively),
/// with its checksum (kWholeChecksum, format 1.6).
void write_string_dataset(const Ctx& c, hid_t parent, const char* name, const std::vector<std::string>& values,
                          hid_t dxpl, bool i_write);

// ---- reading helpers (independent; throw missing_object / bad_shape) ----
bool exists(hid_t parent, const std::string& path);
std::string read_attr_string(const Ctx& c, hid_t obj, const char* name);
std::vector<std::int64_t> read_attr_i64(const Ctx& c, hid_t obj, const char* name);
std::vector<double> read_attr_f64(const Ctx& c, hid_t obj, const char* name);
std::uint8_t read_attr_u8(const Ctx& c, hid_t obj, const char* name);
std::uint64_t read_attr_u64(const Ctx& c, hid_t obj, const char* name);
bool has_attr(hid_t obj, const char* name);
/// Reads a string dataset; throws FileError(corrupt) if it has a checksum (format 1.6)
/// its bytes do not match.
std::vector<std::string> read_string_dataset(const Ctx& c, hid_t parent, const char* name);
/// The attribute holding a whole dataset's XXH3-64 (its bytes as stored), on datasets the
/// row checksums do not cover: level_offsets and /common's string datasets (format 1.6).
inline constexpr const char* kWholeChecksum = "xxh3";
/// Writes kWholeChecksum of `bytes` on `dataset` (collective: every rank the same bytes).
void write_whole_checksum(const Ctx& c, hid_t dataset, const void* bytes, std::size_t n);
/// Checks `bytes` (the dataset's, as stored) against its kWholeChecksum, if it has one;
/// throws FileError(corrupt) "<path> does not match its checksum".
void check_whole_checksum(const Ctx& c, hid_t dataset, const void* bytes, std::size_t n);
/// Names of the links in a group, sorted.
std::vector<std::string> list_links(const Ctx& c, hid_t group);
/// Dimensions of a dataset.
std::vector<hsize_t> dims(const Ctx& c, hid_t dset, const std::string& what);

/// Opens an object or throws missing_object naming `what`.
Group open_group(const Ctx& c, hid_t parent, const std::string& path);
Dataset open_dataset(const Ctx& c, hid_t parent, const std::string& path);

/// File selection: union of row ranges [start, start+count) of a dataset whose first
/// dimension is rows; `tail` = product of the remaining dims. Selects none if empty.
using detail::RowRun;
using detail::runs_of;
void select_rows(const Ctx& c, hid_t space, const std::vector<RowRun>& runs);

}  // namespace rwd::kernel::h5
