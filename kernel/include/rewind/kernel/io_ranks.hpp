// Dedicated I/O ranks (IoOptions::strategy = "dedicated"): the Damaris model.
//
// A few processes per node do no computing. Each output step, the compute ranks of a node
// copy their grids' interiors into MPI shared memory (MPI_Win_allocate_shared), send their
// I/O rank a short description, and go on computing at once. The I/O ranks write the step
// collectively among themselves into the same shared file, in the same format and with the
// same commit protocol as a collective write (they run an ordinary Writer). Memory is
// bounded: a compute rank has at most IoOptions::steps_in_flight steps handed off and not
// yet written; the next output waits for its I/O rank (WriteStats::handoff.wait_seconds). A code
// that computes a step in the shared memory itself (Writer::span, Damaris's damaris_alloc)
// skips the copy: handing the step over then costs a message.
//
// The launcher (rewind run, launch::split_roles) forms one I/O group per I/O rank: the
// compute ranks it serves and the I/O rank itself, last, all on one node. Then
//
//   compute ranks:  env.io_group = group;   Writer::create / append (..., env) / write_step / close
//                   as usual (collective over the compute ranks); after the last writer is
//                   closed, release_io_ranks(group) (every compute rank, once).
//   I/O ranks:      serve_io_ranks(group, io);  returns when the group's compute ranks have
//                   released it (`io`: the I/O ranks' communicator).
//
// Errors: a step the I/O ranks fail to write is reported by the compute ranks' next
// write_step or close (FileError naming the step); committed steps are never lost.
//
// Besides writing, the I/O ranks can hand steps to a StepConsumer (an in-situ hook: the
// driver's InsituConsumer). The compute ranks choose the steps (Writer::hand_off); such a
// step crosses with its halos, and may be one the I/O ranks do not write at all.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>

#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel {

/// What an I/O rank did, for the run's report.
struct IoRankStats {
  std::int64_t steps = 0;          ///< steps written
  std::int64_t consumed = 0;       ///< steps handed to the StepConsumer
  std::int64_t bytes = 0;          ///< bytes of those steps, all I/O ranks
  double write_seconds = 0.0;      ///< time inside Writer::write_step, flushes included
  double idle_seconds = 0.0;       ///< time waiting for the compute ranks
};

/// What the I/O ranks do with a step besides writing it. This interface is the whole seam:
/// the kernel calls it with the plain description it already has (StepInfo, LocalGrids)
/// and knows nothing of what runs behind it, so it need not link the in-situ hook's
/// loader (rewind::insitu) nor know its ABI; the caller of serve_io_ranks brings one.
class StepConsumer {
 public:
  virtual ~StepConsumer() = default;
  /// A step the compute ranks handed over for it (Writer::hand_off), after the I/O ranks
  /// wrote it when it is written too. Collective over `io`: every I/O rank is called with
  /// the same steps, in order, each with the grids of the compute ranks it serves.
  /// `step.fields` are the consumer's fields (names and GridRecord::fields slots);
  /// `grids` hold the arrays as the compute ranks had them, halos included
  /// (grids.halo), in shared memory the compute ranks reuse once this returns: copy what
  /// you keep. Returns whether it wants more steps (false after an error it reported;
  /// the same on every I/O rank): the compute ranks then stop handing them over
  /// (Writer::consumer_declined). Must not throw: an exception ends the I/O rank. `file`:
  /// the run file the I/O ranks write the step's timeline into.
  virtual bool consume(const StepInfo& step, const LocalGrids& grids, MPI_Comm io, const std::string& file) = 0;
};

/// The I/O rank's loop. Collective over `io` (every I/O rank of the job calls it); serves
/// the compute ranks of `group` (this rank is its last rank). Returns the rank's figures
/// when they have all called release_io_ranks. `consumer` (optional, borrowed, the same
/// kind on every I/O rank) takes the steps handed to it; without one they are dropped.
/// `on_phase`: for tests, the fault-injection hook (WriterEnv::on_phase) of the writers the
/// I/O ranks open — the compute ranks' options cross without it. A failed write goes back
/// to the compute ranks (their Writer throws it); an MPI failure aborts the job (MPI's
/// default error handler: nothing sets MPI_ERRORS_RETURN, so mpi::check never sees one).
IoRankStats serve_io_ranks(MPI_Comm group, MPI_Comm io, StepConsumer* consumer = nullptr,
                           std::function<void(const char*)> on_phase = {});

/// Every compute rank of `group`, once, after its last Writer is closed: the I/O rank may
/// stop. Does not wait for the other groups.
void release_io_ranks(MPI_Comm group);

}  // namespace rwd::kernel
