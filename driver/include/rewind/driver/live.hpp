// The live link: the compute ranks' side of the collector (paper, Fig. 4).
//
// Under `mpirun -np P rewind run CASE --listen HOST:PORT` world rank 0 is the
// neighbourhood server, world rank 1 the collector and ranks 2..P-1 compute. The
// collector talks to the compute ranks only through their root (compute rank 0), on
// the service communicator, and only at step boundaries:
//
//   root → collector  kStatusTag   JSON status, once per boundary (never blocks: small)
//   collector → root  kCommandTag  JSON command (one at a time)
//   root → collector  kReplyTag    JSON reply to that command
//   each compute rank → collector  kValuesTag (f64) + kTypesTag (u8): a window's values
//
// At every boundary the root looks for a command (MPI_Iprobe) and broadcasts it (or
// "none") to the compute ranks, which carry it out together: so a run nobody queries
// pays one small broadcast per step, and a query costs the copy of its values. While
// paused, held (the collector reads the file) or ended, the root waits for commands.
// Commands (field "op"): window, hold, release, pause, resume, stop, set, parameters,
// branch, bye. docs/collector-protocol.md ("Live runs") describes them for users.
#pragma once
#include <mpi.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "rewind/driver/live_memory.hpp"
#include "rewind/driver/run.hpp"

namespace rwd::driver {

inline constexpr int kLiveCommandTag = 0x4c30;
inline constexpr int kLiveReplyTag = 0x4c31;
inline constexpr int kLiveValuesTag = 0x4c32;
inline constexpr int kLiveTypesTag = 0x4c33;
inline constexpr int kLiveStatusTag = 0x4c34;

// A window's cells travel from each compute rank to the collector per *run*: a maximal
// stretch of consecutive pieces of the command's list that the rank owns. The rank sends
// one message per (variable, run), variable after variable, tag kLiveValuesTag, then one
// per run with the cell types, tag kLiveTypesTag. The collector posts the same receives
// in the same order (MPI matches one source's messages of one tag in order), each
// straight into the run's place in the reply's arrays: a contiguous receive buffer, so
// MPI copies it once (CMA get), and nothing is copied again. A rank owning no piece
// sends nothing.
//
// Shared memory (the collector's node): a window command may carry "shm", a segment of
// the collector (live_memory.hpp) holding the reply's arrays: values[v] at byte
// v * cells * 8 of its data, then the cell types, each run at its offset in piece order.
// A compute rank that can map it extracts its cells straight into their places and
// sends each (variable, run) message with no data (count 0: "written in place"); one
// that cannot sends the values as above, which the collector receives into the same
// places. "slots" lists the segments the collector still has: a rank unmaps the others.

/// The observer that serves the collector. Add it first: steering changes made at a
/// boundary must precede that boundary's output. Collective over the compute ranks.
class LiveLink final : public Observer {
 public:
  /// `service`: the communicator shared with the collector (Roles::service);
  /// `collector`: its rank there; `compute`: the compute ranks' communicator.
  /// `pause_at_end`: when the run reaches its end (time or step limit), pause there, its
  /// last step written, so clients can still look, branch, or set a later time.end and
  /// resume; `resume` or `stop` then ends it.
  LiveLink(MPI_Comm service, int collector, MPI_Comm compute, bool pause_at_end = false);
  void at_boundary(Run& run, const Boundary& b) override;
  /// Pauses at the end if asked to (above); then tells the collector the run has ended
  /// and serves its last commands (windows of the final state, steps) until it says bye;
  /// then, if windows were served, the root prints one `live:` line: how many, and the
  /// time the slowest compute rank spent copying and sending them (what querying
  /// clients cost the run).
  void at_end(Run& run) override;

 private:
  void send_status(Run& run, const char* state);
  void serve(Run& run, bool ending);
  MPI_Comm service_, compute_;
  int collector_;
  int compute_rank_ = 0;
  bool paused_ = false, held_ = false, pause_at_end_ = false, branched_ = false;
  double t0_ = 0.0, last_status_ = 0.0;
  std::chrono::steady_clock::time_point warm_until_{};  ///< shorter naps until then (a burst)
  std::int64_t steps_ = 0;
  std::int64_t windows_ = 0;     ///< window commands served
  std::int64_t in_place_ = 0;    ///< of them, written into the collector's shared memory
  double window_seconds_ = 0.0;  ///< time in them on this rank (copy + send)
  static constexpr std::size_t kKeepValues = std::size_t{8} << 20;  ///< 64 MiB of doubles
  std::vector<double> values_;         ///< a window's values, kept up to kKeepValues
  std::vector<std::uint8_t> types_;    ///< and its cell types
  std::vector<MPI_Request> sends_;      ///< their sends in flight
  std::vector<SharedSegment> attached_;  ///< the collector's segments this rank has mapped
};

}  // namespace rwd::driver
