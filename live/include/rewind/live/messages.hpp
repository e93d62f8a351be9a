// The live link's messages between a run's collector and its compute ranks: typed,
// versioned frames on Rewind's wire codec (rewind/wire/wire.hpp, magic "RWLV",
// version kVersion), one encode/decode pair per kind, round-trip tested
// (tests/live/test_messages.cpp). docs/collector-protocol.md ("Live runs") describes
// what each command does for users.
//
//   collector → compute root   a Command (frame type 1..8: its Op)
//   compute root → collector   a Reply to it (type 64)
//   compute root → collector   a Status, at boundaries and changes of state (type 65)
//
// A window's cell values do not travel in these frames: each compute rank sends its own
// cells (or writes them into memory the collector shares with it; link.hpp).
// Pure: no MPI, no sockets. decode_* throw wire::WireError on anything malformed.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "rewind/collector/messages.hpp"
#include "rewind/live/memory.hpp"

namespace rwd::live {

/// Version of these frames; a peer of another version is refused (wire::Fault::bad_version).
/// 2: a parameter's open range ends (min_open, max_open). 3: a window's cells travel in
/// runs cut at kRunCells (link.hpp: runs_of), so peers of 2 would expect other messages.
/// 4: futures -- a branch forks several at once, a window, a control or a set names the
/// future it is for, a status lists them. 5: the details command (adaptive live windows);
/// a reply carries grids' details. 6: a future's status says which compute ranks compute it
/// (futures on groups of ranks). 7: a tree frame names the future it describes (the
/// collector keeps one per future: futures of a C code each compute on their own tree).
/// 8: a window's reply carries each variable's range over the grids it shows (colour ranges).
/// 9: a details reply carries each grid's octants' shares of its parent's detail (adaptive
/// windows by octants).
inline constexpr std::uint16_t kVersion = 9;

/// One selected grid of a window, cropped: cells first + stride * (i, j, k) for
/// (i, j, k) < count, on the compute rank `owner` (its rank among the compute ranks).
struct PiecePlacement {
  std::uint64_t uid = 0;
  std::int32_t owner = 0;
  std::array<std::int32_t, 3> first{}, count{};
  std::int32_t stride = 1;
  [[nodiscard]] std::uint64_t cells() const;
  bool operator==(const PiecePlacement&) const = default;
};

// Parameter changes are the collector protocol's collector::ParamValues (name → one
// number or three); on these frames each travels as its name and its numbers.

/// A steerable parameter, declared by the code once, as data: the collector protocol's
/// collector::ParameterInfo (a client sees what the code declared). On these frames its
/// value travels as a vector flag and its numbers.
using collector::ParameterInfo;

enum class Op : std::uint16_t { window = 1, hold, release, control, parameters, set, branch, bye, details };
// A run's state and a control's action are the collector protocol's own types
// (collector::RunState, collector::ControlAction): a client's word and the compute ranks'
// are one idea. These frames carry each as its enumerator's byte.

/// The cells of `pieces` for `vars`, into the collector's segment `shm` when a rank can
/// map it (link.hpp); `slots` names the segments the collector still has.
struct WindowCommand {
  std::vector<std::string> vars;
  std::vector<PiecePlacement> pieces;
  std::vector<std::uint64_t> slots;
  std::optional<SegmentName> shm;
  std::string file;  ///< the future whose state it shows ("" = the first)
  bool operator==(const WindowCommand&) const = default;
};
struct Hold {  ///< wait at this boundary until Release (the collector reads the files)
  bool operator==(const Hold&) const = default;
};
struct Release {
  bool operator==(const Release&) const = default;
};
struct ControlCommand {
  collector::ControlAction action = collector::ControlAction::pause;
  std::string file;  ///< the future it acts on ("" = every future)
  bool operator==(const ControlCommand&) const = default;
};
struct ParametersQuery {
  bool operator==(const ParametersQuery&) const = default;
};
struct SetCommand {
  collector::ParamValues values;
  std::string file;  ///< the future it changes ("" = every future)
  bool operator==(const SetCommand&) const = default;
};
/// One future of a branch: its changed values, into `output` ("" = a name the run chooses).
struct Future {
  collector::ParamValues values;
  std::string output;
  bool operator==(const Future&) const = default;
};
/// Go back to step `from` ("FILE@SELECTOR", or "@SELECTOR": a step on the timeline of
/// the file being written, through its parents) and continue as each of `futures` (one:
/// a branch; several: a fork, every future computed by this job). A job computing several
/// futures forks the one writing FILE.
struct BranchCommand {
  std::string from;
  std::vector<Future> futures;
  bool operator==(const BranchCommand&) const = default;
};
struct Bye {  ///< the collector is done: the run may end
  bool operator==(const Bye&) const = default;
};
/// The details of variable `var` (its per-grid statistics' third column, as a step written
/// now would store them: kernel::grid_statistics) of every grid of the future writing
/// `file` ("" = the first): what an adaptive window of the live state ranks grids by. The
/// compute ranks also send the collector the whole tree they computed them on (tree.hpp).
struct DetailsCommand {
  std::string var;
  std::string file;
  bool operator==(const DetailsCommand&) const = default;
};
using Command = std::variant<WindowCommand, Hold, Release, ControlCommand, ParametersQuery, SetCommand, BranchCommand,
                             Bye, DetailsCommand>;
[[nodiscard]] Op op_of(const Command& c) noexcept;

/// The compute root's answer to a command. `ok` false: `message` says why (one line),
/// the rest is unset. Otherwise the fields the command's kind fills (docs: "Live runs").
struct Reply {
  bool ok = true;
  std::string message;
  std::int64_t step = 0;     ///< the run's step (set: the first step computed with the change)
  double time = 0.0;
  std::string file;          ///< the file being written (branch: the new one)
  std::string parent;        ///< branch: the file branched from
  collector::RunState state = collector::RunState::running;  ///< control
  std::vector<ParameterInfo> parameters;                     ///< parameters
  std::vector<std::string> applied;      ///< set: the changes as key=value
  std::vector<std::string> files;        ///< branch: every future's file (`file` is the first)
  /// details: every grid's uid and its detail (none: a step would store no statistics).
  std::vector<std::uint64_t> uids;
  std::vector<double> details;
  /// details: each grid's octants' shares of its parent's detail, `details`' grids in
  /// order, the same count each (max_children); empty where a step would store none.
  std::vector<double> shares;
  /// window: per variable (in the command's order) its minimum and maximum over the
  /// non-solid cells of the grids the window shows, whole grids, as a file's statistics
  /// rows would say (kernel::grid_range): 2 numbers each, NaN where none has one.
  std::vector<double> ranges;
  bool operator==(const Reply&) const = default;
};

/// One future the job computes: a timeline in its own file.
struct FutureStatus {
  std::string file;
  std::string parent;                ///< "" for an original run
  collector::RunState state = collector::RunState::running;  ///< its own (one future may be paused, or have ended)
  std::int64_t step = 0;
  double time = 0.0;
  std::int64_t steps = 0;            ///< steps it computed
  double wall = 0.0;                 ///< seconds since it started
  std::vector<std::string> changes;  ///< "key=value": against its parent, then steered
  std::int32_t first_rank = 0;       ///< it computes on the compute ranks [first_rank, first_rank + ranks)
  std::int32_t ranks = 1;
  bool operator==(const FutureStatus&) const = default;
};

/// Where the run is, sent by the compute root.
struct Status {
  collector::RunState state = collector::RunState::running;
  std::int64_t step = 0;
  double time = 0.0;
  std::string file;                  ///< being written ("" none)
  std::string parent;                ///< of a branch, "" for an original run
  std::vector<std::string> files;    ///< every file of the job so far (the timelines)
  std::int64_t steps = 0;            ///< steps computed since the start
  double wall = 0.0;                 ///< seconds since the start
  std::int32_t ranks = 1;            ///< compute ranks
  std::vector<FutureStatus> futures; ///< every future (one unless forked); the fields above are the first's
  bool operator==(const Status&) const = default;
};

/// Frame type of an encoded message.
inline constexpr std::uint16_t kReplyType = 64;
inline constexpr std::uint16_t kStatusType = 65;

std::vector<std::byte> encode(const Command& c);
std::vector<std::byte> encode(const Reply& r);
std::vector<std::byte> encode(const Status& s);
/// The frame's type (an Op, kReplyType or kStatusType); checks the header.
std::uint16_t frame_type(std::span<const std::byte> frame);
Command decode_command(std::span<const std::byte> frame);
Reply decode_reply(std::span<const std::byte> frame);
Status decode_status(std::span<const std::byte> frame);

}  // namespace rwd::live
