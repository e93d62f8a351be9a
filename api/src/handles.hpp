// The C API's handles and its error plumbing, shared by its files (capi.cpp: output and
// restart; live.cpp: live windows and steering). Private to rewind::capi.
#pragma once
#include <fmt/core.h>

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "average.hpp"
#include "rewind/kernel/claim.hpp"
#include "rewind/kernel/kernel.hpp"
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
  std::uint64_t generation = 0;  ///< changes when the grids do (the live tree's version)
};

struct rewind_file {
  MPI_Comm comm = MPI_COMM_NULL;
  k::Writer writer;
  k::FileClaim claim;  ///< on rank 0: one writing job per file
  rwd::api::ParentAverages averages;
  std::vector<std::vector<std::uint8_t>> fluid;  // cell types for grids given none (all fluid)
  k::IoOptions io;  ///< the options it was opened with (a branch keeps them)
  /// Steered parameters in force, "name=value", recorded with every step written (the
  /// live service keeps it: a branch from a step restores what was in force then).
  std::vector<std::string> overrides;
};

struct rewind_reader {
  k::Reader reader;
  k::StepTopology topo;
  std::vector<std::int64_t> rows;
  std::vector<k::StepEntry> steps;
};

namespace rwd::api {

inline thread_local std::string g_error;

inline int fail(int status, const std::string& message) {
  g_error = message;
  return status;
}

inline int from_kind(k::ErrorKind kind) {
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
int guarded(F&& f) noexcept {
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
