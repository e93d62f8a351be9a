// The run's side of the in-situ hook (rewind/insitu.h is the hook's side): loading a
// hook library and calling it with the plain description of a step's grids that the
// I/O kernel takes (kernel::CommonInfo, kernel::StepInfo, kernel::LocalGrids).
//
//   auto hook = Hook::load("libmy_hook.so");        // local; throws HookError (one line)
//   hook.init({.args = ..., .every = 10}, common, comm);   // collective over comm
//   hook.step(common, step, grids, comm);            // collective, never throws for the hook
//   hook.finalize(comm);                             // collective
//
// The call site is one function of plain data and a communicator, so it runs on the
// compute ranks (driver::InsituObserver) or on dedicated I/O ranks that received the
// grids (driver::InsituConsumer).
//
// Errors: a hook's non-zero return or C++ exception (caught here at the boundary) on
// any rank is agreed over the communicator (one small allgather per call), reported
// once — one line on stderr from the lowest failing rank, naming the library, the call
// and the step — and the hook is disabled on every rank: it is not called again
// (finalize excepted when init succeeded). A crash (SIGSEGV) cannot be contained.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "rewind/kernel/metadata.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::insitu {

/// A hook that cannot be loaded: the message is one line naming the library and what
/// is wrong (missing file, dlopen's error, missing symbol, ABI version).
class HookError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What init passes through from the case ([insitu] and [case]).
struct InitArgs {
  std::string args;       ///< insitu.args, verbatim
  std::string case_name;  ///< case.name
  std::int64_t every = 1; ///< insitu.every
};

/// The outcome of one call, the same on every rank of the communicator.
struct Outcome {
  bool ok = true;
  std::string message;  ///< the reported line when !ok (also printed once), "" if ok
};

class Hook {
 public:
  /// dlopen(library) and resolve the four entry points; checks the ABI version. A path
  /// with a '/' must exist; a bare name is searched as dlopen does. Local, not
  /// collective; call it identically on every rank. Throws HookError. The library is
  /// never unmapped (RTLD_NODELETE: hooks that start interpreters or threads register
  /// exit handlers inside themselves).
  static Hook load(const std::string& library);

  Hook(Hook&&) noexcept;
  Hook& operator=(Hook&&) noexcept;
  ~Hook();

  [[nodiscard]] const std::string& library() const;
  /// True until an error disabled the hook.
  [[nodiscard]] bool enabled() const;

  /// rewind_insitu_init. Collective over `comm`. Not called twice.
  Outcome init(const InitArgs& args, const kernel::CommonInfo& common, int halo, MPI_Comm comm);
  /// rewind_insitu_step_desc with `grids` (pointers passed through, no copy): variables
  /// are step.fields' names, GridRecord::fields[slot] their arrays. Collective over
  /// `comm`. Does nothing once disabled or before a successful init. `file`: the run
  /// file the step belongs to (rewind_insitu_step_desc::file).
  Outcome step(const kernel::CommonInfo& common, const kernel::StepInfo& step, const kernel::LocalGrids& grids,
               MPI_Comm comm, const std::string& file = "");
  /// rewind_insitu_finalize, once, if init succeeded. Collective over `comm`.
  Outcome finalize(MPI_Comm comm);

 private:
  struct Impl;
  explicit Hook(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::insitu
