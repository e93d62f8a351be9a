// The live link, the compute ranks' side (paper, Fig. 4): at every step boundary the
// compute ranks serve what the collector asks — windows of the state they hold,
// pause / resume / stop, parameter changes, branches — and go on. Generic over the code:
// a Host says where the run is, gives its grids and carries out steering; `rewind run`'s
// driver is one host, the C API's live calls another.
//
// Two places for the collector (relay.hpp):
// - on a rank of its own (`Link::to_rank`, the Damaris model; `rewind run --listen` on
//   3 or more processes): commands, replies and statuses travel on MPI between it and
//   the compute root, and each compute rank sends its cells to it;
// - on a thread of compute rank 0 (`Link::to_thread`, the Catalyst Live model: no extra
//   rank): commands and replies go through memory (ThreadChannel), the other compute
//   ranks send their cells to rank 0, which gathers them into the reply.
// Either way the compute root looks for a command at each boundary (a poll), broadcasts
// it, and the ranks carry it out together: a run nobody queries pays one small broadcast
// per step; a paused or held one waits with a back-off (rewind/mpi/backoff.hpp).
//
// Cells of a window travel per *run*: a stretch of consecutive pieces of the command
// that a rank owns, cut once it holds kRunCells cells (runs_of); one message per
// (variable, run), variable after variable, then one per run with the cell types. A
// rank that can map the collector's shared memory (memory.hpp, same node) writes its
// cells straight into their places and sends each message empty ("written in place"),
// each run as soon as it is written. A rank owning no piece sends nothing.
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/kernel/grids.hpp"
#include "rewind/live/messages.hpp"

namespace rwd::live {

inline constexpr int kCommandTag = 0x4c30;
inline constexpr int kReplyTag = 0x4c31;
inline constexpr int kValuesTag = 0x4c32;
inline constexpr int kTypesTag = 0x4c33;
inline constexpr int kStatusTag = 0x4c34;

/// A run is cut at the piece that would start beyond this many cells (512 KiB of
/// doubles): a rank announces each run as soon as it is written, so the collector streams
/// a window's first bytes while the rank writes the rest of the variable.
inline constexpr std::uint64_t kRunCells = std::uint64_t{1} << 16;

/// A run of a window: the pieces [first, last) of the command, of compute rank `owner`,
/// whose cells are at [at, at + cells) of each of the reply's arrays.
struct Run {
  int owner = 0;
  std::size_t first = 0, last = 0;
  std::uint64_t at = 0, cells = 0;
};

/// The runs of a window command's pieces, in order: a new run where the owner changes
/// or the current one has reached `cap` cells. The compute ranks and the collector cut
/// alike (one message each per run and array).
std::vector<Run> runs_of(const std::vector<PiecePlacement>& pieces, std::uint64_t cap = kRunCells);

/// What a code gives the link. Every method is called on every compute rank at the same
/// boundary, in the same order (so a host may use collectives, and must throw alike on
/// every rank).
class Host {
 public:
  virtual ~Host() = default;
  /// Where the run is: step, time, the file being written and the timeline's files.
  virtual Status where() = 0;
  /// This rank's grids for a window, valid until the next call into the host: leaves of
  /// the current step; parents (the level of detail: their children's averages) may
  /// lag until sync_parents(). Collective.
  virtual const kernel::LocalGrids& grids() = 0;
  /// Brings the parents of the grids grids() gave up to the current step, in place (the
  /// records stay valid). The link calls it only for a window with a piece above the
  /// leaves, so a window of leaves pays no restriction. Collective. Default: nothing
  /// (a host whose grids() gives current parents).
  virtual void sync_parents() {}
  /// The slot of variable `name` in the grids' fields; throws std::invalid_argument
  /// naming it and the variables there are.
  virtual int variable(const std::string& name) = 0;
  virtual std::vector<ParameterInfo> parameters() = 0;
  /// Applies changes from the next step on; returns them as "key=value" (recorded with
  /// the steps written from now). `file`: the future it changes ("" = every future).
  /// Throws std::invalid_argument (nothing changed).
  virtual std::vector<std::string> set(const collector::ParamValues& values, const std::string& file) = 0;
  /// Makes the future writing `file` the one where(), grids(), sync_parents() and
  /// variable() speak of until focus("") (the future at this boundary). Throws
  /// std::invalid_argument naming the futures there are. Default: "" and the file
  /// being written only (a code with one future).
  virtual void focus(const std::string& file);
  /// Starts the branch: the run now continues in it. Fills `reply`'s file, parent,
  /// step and time. Throws (the run goes on where it was), or PausedError when it
  /// cannot go on where it was (the link pauses the run and replies the message).
  virtual void branch(const BranchCommand& b, Reply& reply) = 0;
  /// pause / resume / stop, after the link has changed its state; a stopped run ends at
  /// this boundary (with a final checkpoint, as the host does at its end). Throws
  /// std::invalid_argument to refuse (the link's state is then restored). `file` not
  /// empty: that future alone (the link's state does not change; its others go on).
  virtual void control(collector::ControlAction a, const std::string& file) = 0;
  /// Changes whenever this rank's grids change (an adaptive step, a new timeline): the
  /// link then sends the collector the whole tree again when it selects windows itself.
  virtual std::uint64_t tree_version() = 0;
};

/// Host::branch failed and the run cannot go on where it was: it pauses there.
class PausedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ThreadChannel;

/// The compute ranks' side of the live link. Collective over the compute ranks.
class Link {
 public:
  /// The collector is rank `collector` of `service` (which holds the compute ranks too,
  /// compute root included); `compute` is the compute ranks' communicator. `send_tree`:
  /// the collector selects windows on the tree the compute ranks send it (tree.hpp),
  /// not through a neighbourhood server.
  static Link to_rank(MPI_Comm service, int collector, MPI_Comm compute, bool send_tree = false);
  /// The collector is a thread of compute rank 0 (relay.hpp: RelayThread) that
  /// shares `channel` with it; `channel` is null on the other compute ranks.
  static Link to_thread(std::shared_ptr<ThreadChannel> channel, MPI_Comm compute);
  Link(Link&&) noexcept;
  Link& operator=(Link&&) noexcept;
  ~Link();

  /// At a step boundary: a status now and then, then every command waiting (and all
  /// of them while paused or held). `first`: a new timeline starts here.
  void at_boundary(Host& host, bool first, bool stepped);
  /// Pauses (a client may look, set a later end, branch, resume or stop). True if the
  /// run goes on: resumed (with more to do) or branched.
  bool pause_at_end(Host& host);
  /// The run has ended: says so, serves the collector until it says bye, and returns
  /// what the windows cost (for the run's closing line, on compute rank 0).
  struct Summary {
    std::int64_t windows = 0;    ///< window commands served
    double slowest = 0.0;        ///< seconds in them on the slowest compute rank
    std::int64_t above_leaves = 0;  ///< of them with a piece above the leaves (Host::sync_parents)
    double parents = 0.0;           ///< of `slowest`'s kind: seconds in Host::sync_parents
    int ranks_in_place = 0;      ///< compute ranks that wrote into shared memory
    int ranks = 1;
  };
  Summary finish(Host& host);
  /// True once a stop command was served.
  [[nodiscard]] bool stopped() const;

 private:
  struct Impl;
  explicit Link(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::live
