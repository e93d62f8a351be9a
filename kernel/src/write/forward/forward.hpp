// Private: handing steps from compute ranks to the rank that writes them (strategies
// "aggregated" and "dedicated", io_ranks.hpp).
//
// A group is a communicator on one node: its clients (compute ranks) and one server (the
// rank that writes for them: the node leader, or a dedicated I/O rank). Each client owns a
// segment of one MPI shared-memory window holding `slots` copies of its step's cell data;
// a command message per client says what is in its slot. The server assembles a LocalGrids
// whose pointers are the clients' segments, so the writer's zero-copy path writes straight
// from shared memory. A step only written crosses as interiors (halo 0: the least to
// copy); a step for the I/O ranks' StepConsumer crosses as the padded arrays (halo as the
// client had it: the consumer's stencils need it), and the writer, which takes halos,
// writes the same bytes from either.
//
// The wire is handoff_wire.hpp, the shared memory shared_slots.hpp, a slot's layout and
// packing slot_layout.hpp; here the two sides: StepServer (io_ranks.cpp) and Forwarder
// (forward.cpp), the engine of strategies aggregated and dedicated (engine.hpp).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "write/engine.hpp"
#include "write/forward/handoff_wire.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/io_ranks.hpp"
#include "rewind/kernel/writer.hpp"
#include "rewind/mpi/comm.hpp"
#include "write/forward/shared_slots.hpp"
#include "write/forward/slot_layout.hpp"

namespace rwd::kernel::detail {

/// The writing side of a group: receives one command from every client, carries it out
/// with an ordinary Writer over `writers` (the servers of all groups), replies.
class StepServer {
 public:
  /// `self_client`: this rank is also a client of the group (aggregated). `consumer`
  /// (borrowed, may be null): takes the steps handed to it, collectively over `writers`.
  /// `on_phase`: the writers' WriterEnv::on_phase (a std::function does not cross the wire).
  StepServer(MPI_Comm group, MPI_Comm writers, bool self_client, StepConsumer* consumer = nullptr,
             std::function<void(const char*)> on_phase = {});
  ~StepServer();  ///< waits for the replies still being sent
  StepServer(const StepServer&) = delete;
  StepServer& operator=(const StepServer&) = delete;
  /// One command from every client, carried out (collective over `writers` when the
  /// command is). False once every client has released the server.
  bool serve_one();
  [[nodiscard]] const IoRankStats& stats() const { return stats_; }
  [[nodiscard]] SharedSlots& window() { return window_; }

 private:
  MPI_Comm group_, writers_;
  int me_ = 0;
  std::vector<int> clients_;
  bool self_client_;
  std::optional<Writer> writer_;
  StepConsumer* consumer_;
  std::function<void(const char*)> on_phase_;
  bool consumer_active_;
  SharedSlots window_;
  IoRankStats stats_;
  std::vector<std::vector<std::byte>> in_;                              ///< this command, per client
  std::deque<std::pair<MPI_Request, std::vector<std::byte>>> replies_;  ///< sends in progress
  void reply_all(Packer& msg);  ///< the same reply to every client (nonblocking)
  /// One command from every client (waiting, napping); `op`: theirs, the same from all.
  std::vector<Unpacker> receive(Op& op);
  void open(Unpacker& u);                 ///< opens the file with the writers, replies
  void resize(std::vector<Unpacker>& u);  ///< a new shared window (no reply)
  void step(std::vector<Unpacker>& u);    ///< writes and/or consumes a step, replies
  /// The step written by this rank's Writer: its error, or nothing (`st` filled).
  std::optional<FileError> write(const StepInfo& info, const LocalGrids& grids, WriteStats& st);
  void close();  ///< closes the file, replies, frees the window
};

/// The compute side of a Writer whose steps another rank writes ("dedicated": the I/O
/// rank of env.io_group; "aggregated": the node leader, which may be this rank).
class Forwarder final : public Engine {
 public:
  /// Collective over `comm` (the compute ranks): opens (append) or creates the file
  /// through the group's server.
  Forwarder(MPI_Comm comm, bool append, const std::string& path, const CommonInfo* common, const IoOptions& options,
            const WriterEnv& env);
  ~Forwarder() override;  ///< closes if still open; never throws (reports on stderr)
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  WriteStats write_step(const StepInfo& info, const LocalGrids& grids) override;
  /// Writer::hand_off: dedicated only (aggregated refuses: no_consumer).
  WriteStats hand_off(const StepInfo& info, const LocalGrids& grids, bool write,
                      const std::vector<FieldSpec>& consume) override;
  /// Writer::span: a free slot, sized for the step, as `like`'s grids.
  LocalGrids span(const StepInfo& info, const LocalGrids& like) override;
  /// Writer::prepare: the shared window sized (and this rank's slots touched) for steps
  /// like this one (with `consume`, dedicated only: handed to the consumer too), before
  /// the first of them.
  void prepare(const StepInfo& info, const LocalGrids& grids, const std::vector<FieldSpec>* consume) override;
  void close() override;
  /// Writer::settle: every step in flight settled; throws the first one's error.
  void settle() override;
  [[nodiscard]] bool dedicated() const { return dedicated_; }
  [[nodiscard]] bool consumer_declined() const override { return dedicated_ && consumer_declined_; }
  [[nodiscard]] const std::string& path() const override { return path_; }
  [[nodiscard]] const CommonInfo& common() const override { return common_; }
  [[nodiscard]] std::int64_t last_step() const override { return last_step_; }

 private:
  /// write_step and hand_off: `consume` null: write only.
  WriteStats forward(const StepInfo& info, const LocalGrids& grids, bool write, const std::vector<FieldSpec>* consume);
  /// To the server (and serves it, if it is us); `wait`: until the message is out.
  void command(Packer& msg, bool wait);
  void complete_sends(std::size_t n);     ///< waits for the n oldest command sends
  std::vector<std::byte> reply();         ///< the server's next reply to this rank
  void settle_one(WriteStats* into);      ///< the oldest outstanding step's reply; throws its error
  std::optional<FileError> settle_all();  ///< every outstanding step's reply; the first error
  /// Collective: a new window if any rank needs more than slot_capacity_ (`grow`: this
  /// rank's need, or 0); settles every step in flight first.
  void ensure_capacity(std::int64_t need, bool grow_any, WriteStats* st);
  /// Collective: ensure_capacity with the ranks' agreement on growing taken here; true if
  /// the window grew.
  bool fit(std::int64_t need, WriteStats* st);
  SharedSlots& window() { return local_server_ ? local_server_->window() : own_window_; }
  mpi::Comm comm_, node_, leaders_;  ///< node_/leaders_: aggregated only
  MPI_Comm group_ = MPI_COMM_NULL;
  int me_ = 0, server_ = 0;
  std::optional<StepServer> local_server_;  ///< aggregated, on the node leader
  std::string path_;
  CommonInfo common_;
  std::int64_t last_step_ = -1;
  std::int64_t slots_ = 1, slot_capacity_ = 0, next_slot_ = 0;
  SharedSlots own_window_;
  std::deque<std::int64_t> in_flight_;                                ///< steps handed off and not yet settled
  std::deque<std::pair<MPI_Request, std::vector<std::byte>>> sends_;  ///< command sends in progress
  bool open_ = false;
  bool failed_ = false;             ///< a step's error was thrown: a failing close is not news
  bool dedicated_ = false;          ///< the server is an I/O rank (not the node leader)
  bool consumer_declined_ = false;  ///< as the last settled step's reply said
  /// The span lent for the next step (Writer::span), until a hand-off takes or drops it.
  struct Lent {
    SlotLayout layout;
    LocalGrids grids;              ///< as returned: the pointers to recognise
    WriteStats waited;             ///< the span's wait and the steps it settled
    const std::byte *begin, *end;  ///< its bytes in this rank's segment
  };
  std::optional<Lent> lent_;
  /// `grids` are the `lent` span's, for a step of `layout`.
  static bool is_lent(const Lent& lent, const SlotLayout& layout, const LocalGrids& grids);
};

}  // namespace rwd::kernel::detail
