// The C API's live service (rewind/rewind.h, "Live windows and steering"), private to
// rewind::capi: its state (rewind_live), the futures a code computes, and the live::Host
// a boundary gives the link. live.cpp: the C calls; live_host.cpp: the host; live_fork.cpp:
// a branch into one future or several, each on a group of the compute ranks.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handles.hpp"
#include "rewind/collector/messages.hpp"
#include "rewind/live/link.hpp"
#include "rewind/live/relay.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::api {

namespace col = rwd::collector;

/// An event as the library keeps it (its strings live here until the next boundary).
struct Event {
  int kind = 0;
  std::string name;
  std::vector<double> value;
  std::string parent, file;
  std::int64_t step = 0;
  double time = 0.0;
  int future = 0, futures = 1;    ///< BRANCH: which of how many
  std::string changes;            ///< BRANCH: "key=value;key=value"
  MPI_Comm comm = MPI_COMM_NULL;  ///< BRANCH: the communicator the code continues on
};

/// A future the code computes: the one it started with, or one of a fork's. Every rank
/// knows every future; a future's members (the compute ranks [first, first + size))
/// compute it on `comm`.
struct Future {
  std::string file, parent;
  std::vector<std::string> changes;  ///< against its parent, "key=value"
  int first = 0, size = 1;
  MPI_Comm comm = MPI_COMM_NULL;               ///< members only
  std::shared_ptr<rwd::mpi::Comm> owned;       ///< a fork's split (members)
  std::vector<col::ParameterInfo> parameters;  ///< in force
  std::int64_t step = 0;
  double time = 0.0;
  std::int64_t steps = 0;    ///< steps since it started (its status's rate)
  std::int64_t shared = -1;  ///< its step as the last round shared it
  double started = 0.0;      ///< MPI_Wtime of its first boundary (0: none yet)
  bool ended = false;        ///< its ranks called rewind_live_finish
  bool stopping = false;
  bool paused = false;  ///< paused alone (`pause --file`): its ranks wait in their boundary
  bool fresh = true;    ///< its first boundary is to come (a new timeline)
  [[nodiscard]] bool has(int rank) const { return rank >= first && rank < first + size; }
};

}  // namespace rwd::api

struct rewind_live {
  MPI_Comm compute = MPI_COMM_NULL;  ///< the job's compute ranks (every future's)
  MPI_Comm service = MPI_COMM_NULL;  ///< with a collector rank: it and the compute ranks
  bool own_compute = false;
  int rank = 0;                ///< among the compute ranks
  std::int64_t last_step = 0;  ///< this rank's last boundary's, for the closing status
  double last_time = 0.0;
  std::string last_file;
  k::CommonInfo common;  ///< the variables windows may ask for, the geometry
  std::optional<rwd::live::RelayThread> thread;
  std::optional<rwd::live::Link> link;
  std::vector<rwd::collector::ParameterInfo> declared;   ///< with their initial values
  std::vector<rwd::api::Future> futures{1};              ///< in rank order; one until a fork of several
  std::size_t mine = 0;                                  ///< the future this rank computes
  std::vector<std::shared_ptr<rwd::mpi::Comm>> retired;  ///< forked futures' communicators, freed at the end
  std::vector<std::string> files;                        ///< every file this run wrote (the timelines)
  std::deque<rwd::api::Event> events;                    ///< this rank's, of the last boundary
  rwd::api::Event current;                               ///< the one last handed out (its strings)
  bool forked = false;                                   ///< a branch changed the futures in this round
  int port = 0;
  int max_futures = 1;             ///< rewind_live_allow_futures
  std::uint64_t checked_tree = 0;  ///< the grids' generation last found a tree

  rwd::api::Future& my() { return futures[mine]; }
};

namespace rwd::api {

struct ForkPlan;    // live_fork.cpp
struct ForkGroups;  // live_fork.cpp

/// The live link's view of a C code in its round's pass for future `at` (the job's ranks
/// meet once per running future at every boundary: live.cpp, round). `g` and `file` are
/// this rank's own (its future's; null once that has ended).
class Host final : public rwd::live::Host {
 public:
  Host(rewind_live& l, std::size_t at, const rewind_grids* g, rewind_file* file)
      : l_(l), at_(at), cur_(at), g_(g), file_(file) {}

  rwd::live::Status where() override;
  const k::LocalGrids& grids() override;
  void sync_parents() override;
  int variable(const std::string& name) override;
  std::vector<col::ParameterInfo> parameters() override { return l_.futures[cur_].parameters; }
  std::vector<std::string> set(const col::ParamValues& values, const std::string& file) override;
  void focus(const std::string& file) override;
  void branch(const rwd::live::BranchCommand& b, rwd::live::Reply& reply) override;
  void control(col::ControlAction a, const std::string& file) override;
  std::uint64_t tree_version() override;

 private:
  [[nodiscard]] std::array<int, 3> refinement() const;
  [[nodiscard]] bool mine_in_focus() const { return cur_ == l_.mine && g_ != nullptr && !l_.my().ended; }
  std::size_t future_of(const std::string& file) const;
  std::vector<std::size_t> named(const std::string& file) const;
  std::string running_files() const;
  void record();
  void open_future(const ForkPlan& p, const ForkGroups& g, bool member);
  void queue_branch(const Future& f, const std::vector<col::ParameterInfo>& before, const ForkPlan& p, int j);

  rewind_live& l_;
  std::size_t at_, cur_;
  const rewind_grids* g_;
  rewind_file* file_;
  bool ready_ = false;
  bool averaged_ = false;
  k::LocalGrids grids_;
  ParentAverages averages_;
};

/// `values` checked against `params` (each a declared parameter, its components, inside
/// its range) and applied to a copy: the new parameters and the changes as "key=value".
/// Throws std::invalid_argument naming the first problem. Pure.
std::pair<std::vector<col::ParameterInfo>, std::vector<std::string>> changed(std::vector<col::ParameterInfo> params,
                                                                             const col::ParamValues& values);

/// "1.5" or "[1, 2, 3]": a parameter's value as the file records it; and back.
std::string value_text(const std::vector<double>& v);
std::vector<double> parse_value(const std::string& text);

/// One round of the job's compute ranks (every rank, each in its rewind_live_boundary or,
/// its future ended, in rewind_live_finish): every future's step and time shared, then the
/// link's boundary once for each future still running. Returns whether any still runs.
bool round(rewind_live& l, const rewind_grids* g, rewind_file* file);
/// While this rank's future is paused alone, the rounds of the others (its ranks take no
/// step; windows of it are answered from their grids), until it is resumed, stopped or forked.
void hold_while_paused(rewind_live& l, const rewind_grids* g, rewind_file* file);
/// Nobody steps while every future still running is paused alone: the rounds then come
/// every 2 ms, not as fast as the ranks can meet. Local.
void nap_if_idle(const rewind_live& l);

}  // namespace rwd::api
