// The C API's handles and its error plumbing, shared by its files (capi.cpp: output and
// restart; live.cpp: live windows and steering). Private to rewind::capi.
#pragma once
#include <fmt/core.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "average.hpp"
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/kernel.hpp"
#include "rewind/mpi/comm.hpp"
#include "rewind/rewind.h"

namespace k = rwd::kernel;

struct rewind_config {
  k::CommonInfo common;
  k::IoOptions io;
  bool geometry = false;
};

struct rewind_grids {
  int halo = 0;
  std::vector<k::GridRecord> records;
  /// Changes when the grids do (the live tree's version); unique across handles, so a
  /// file knows whether it has checked this tree (rwd::api::next_generation).
  std::uint64_t generation = 0;
  /// float arrays (rewind_grids_set_field_float), floats[grid][slot]; a slot holds a
  /// double array (records) or a float one, never both.
  std::vector<std::vector<const float*>> floats;
  /// The float arrays converted to double by the last records_of (a write, a boundary).
  mutable std::vector<std::vector<double>> converted;
};

struct rewind_file {
  rwd::mpi::Comm comm;  ///< the code's, duplicated: the file's calls agree over it until its close
  k::Writer writer;
  k::FileClaim claim;  ///< on rank 0: one writing job per file
  rwd::api::ParentAverages averages;
  std::vector<std::vector<std::uint8_t>> fluid;  // cell types for grids given none (all fluid)
  k::IoOptions io;  ///< the options it was opened with (a branch keeps them)
  /// Steered parameters in force, "name=value", recorded with every step written (the
  /// live service keeps it: a branch from a step restores what was in force then).
  std::vector<std::string> overrides;
  /// The last committed step's time (-inf: none): times never go backwards in a file.
  double last_time = -std::numeric_limits<double>::infinity();
  double last_dt = 0.0;  ///< the last step's dt (a fork's "nothing is lost" checkpoint writes it again)
  /// The named scalars of the next write (rewind_file_set_scalar), in the order first set.
  std::vector<k::Scalar> scalars;
  std::uint64_t checked_tree = 0;  ///< the grids' generation this file last found a tree
};

struct rewind_reader {
  k::Reader reader;
  k::StepTopology topo;
  std::vector<std::int64_t> rows;
  std::vector<k::StepEntry> steps;
  std::string note;     ///< the last rewind_reader_find_checkpoint's note
  rwd::mpi::Comm comm;  ///< a collective reader's communicator, duplicated (its calls agree over it)
};

namespace rwd::api {

inline thread_local std::string g_error;

/// The grids' records with each float array converted to double once (into
/// g.converted, valid until the next call): what a write and a live boundary hand to the
/// kernel. `block` is the file's cells per grid (the arrays are padded by g.halo).
std::vector<k::GridRecord> records_of(const rewind_grids& g, const k::BlockShape& block);

/// A grids generation no handle has had (0 is none).
inline std::uint64_t next_generation() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

inline rewind_status fail(int status, const std::string& message) {
  g_error = message;
  return static_cast<rewind_status>(status);
}

inline rewind_status from_kind(k::ErrorKind kind) {
  switch (kind) {
    case k::ErrorKind::not_found: return REWIND_ERR_NOT_FOUND;
    case k::ErrorKind::not_hdf5:
    case k::ErrorKind::not_rewind:
    case k::ErrorKind::newer_version:
    case k::ErrorKind::missing_object:
    case k::ErrorKind::bad_shape: return REWIND_ERR_FORMAT;
    case k::ErrorKind::truncated:
    case k::ErrorKind::corrupt: return REWIND_ERR_CORRUPT;
    case k::ErrorKind::no_such_step: return REWIND_ERR_NO_SUCH_STEP;
    case k::ErrorKind::io:
    case k::ErrorKind::no_space: return REWIND_ERR_IO;  // rewind.h: "disk full"
    case k::ErrorKind::invalid_argument: return REWIND_ERR_ARGUMENT;
    case k::ErrorKind::claimed: return REWIND_ERR_CLAIMED;
  }
  return REWIND_ERR_INTERNAL;
}

struct Status : std::runtime_error {  // a status chosen where it is detected
  Status(int s, const std::string& what) : std::runtime_error(what), status(s) {}
  int status;
};

// Runs f, mapping every exception to a status: nothing crosses into C.
template <class F>
rewind_status guarded(F&& f) noexcept {
  try {
    f();
    return REWIND_OK;
  } catch (const Status& e) {
    return fail(e.status, e.what());
  } catch (const k::FileError& e) {
    return fail(from_kind(e.kind()), e.what());
  } catch (const std::invalid_argument& e) {
    return fail(REWIND_ERR_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(REWIND_ERR_IO, "out of memory");
  } catch (const std::exception& e) {
    return fail(REWIND_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(REWIND_ERR_INTERNAL, "an unknown exception");
  }
}

template <class T>
T& need(T* p, const char* what) {
  if (p == nullptr) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} is NULL", what));
  return *p;
}

inline std::string text(const char* s, const char* what) {
  if (s == nullptr) throw Status(REWIND_ERR_ARGUMENT, fmt::format("{} is NULL", what));
  return s;
}

inline void check_version(int v) {
  if (v != REWIND_API_VERSION)
    throw Status(REWIND_ERR_VERSION, fmt::format("this program was compiled against Rewind's API version {}, the "
                                                 "library implements version {}: rebuild it against this library",
                                                 v, REWIND_API_VERSION));
}

}  // namespace rwd::api
