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
// Wire (tag kCommandTag, client -> server; one message per client per command, all clients
// of a group send the same command): a byte Op, then the op's fields in the order below,
// integers and doubles in the host's byte order (client and server share a node).
//   open    mode (0 create, 1 append), path, CommonInfo (create), IoOptions (table strings)
//   resize  slot bytes (this client), slots              -> both sides reallocate the window
//   step    slot index, what (kWriteStep | kConsumeStep), StepInfo, the consumer's fields,
//           the slot's layout (block, grids, slots, halo) and per grid metadata; the data
//           is in the slot
//   close
//   release                                              -> the server may stop
// Replies (tag kReplyTag, server -> each client) to open, step and close: ok byte, then
// either FileError (kind, file, problem, detail) or the op's result (open: last step;
// step: step written or -1, bytes, seconds, then a byte: the consumer wants more steps;
// close: nothing). A step's reply comes after the consumer is done with it, so the
// client reuses the slot only then.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/io_ranks.hpp"
#include "rewind/kernel/writer.hpp"
#include "rewind/mpi/comm.hpp"

namespace rwd::kernel::detail {

inline constexpr int kCommandTag = 7101;
inline constexpr int kReplyTag = 7102;

enum class Op : std::uint8_t { open = 1, resize = 2, step = 3, close = 4, release = 5 };
/// What the server does with a step (bits of the step command's `what`).
inline constexpr std::uint8_t kWriteStep = 1, kConsumeStep = 2;

/// Appends plain values to a byte message.
class Packer {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&v, sizeof(T));
  }
  void append(const void* p, std::size_t n) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + n);
    if (n > 0) std::memcpy(bytes_.data() + at, p, n);
  }
  void put(const std::string& s);
  void put(const std::vector<std::string>& v);
  void put(const std::vector<double>& v);
  void put(const std::vector<std::uint64_t>& v);
  void put(const CommonInfo& c);
  void put(const IoOptions& o);
  void put(const std::vector<FieldSpec>& f);
  void put(const StepInfo& s);
  void put(const FileError& e);
  std::vector<std::byte>& bytes() { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

/// Reads them back; throws FileError(io) past the end (a message from another version).
class Unpacker {
 public:
  explicit Unpacker(const std::vector<std::byte>& b) : b_(b) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  std::string string();
  std::vector<std::string> strings();
  std::vector<double> doubles();
  std::vector<std::uint64_t> uids();
  CommonInfo common();
  IoOptions options();
  std::vector<FieldSpec> fields();
  StepInfo step();
  FileError error();

 private:
  const std::byte* take(std::size_t n);
  const std::vector<std::byte>& b_;
  std::size_t at_ = 0;
};

/// The group's shared-memory window: each client's segment, seen by the server.
class SharedSlots {
 public:
  SharedSlots() = default;
  SharedSlots(const SharedSlots&) = delete;
  SharedSlots& operator=(const SharedSlots&) = delete;
  ~SharedSlots() { release(); }
  /// Collective over `group`: frees the old window and allocates `bytes` for this rank.
  void allocate(MPI_Comm group, std::int64_t bytes);
  /// Collective over the group (MPI_Win_free); no-op without a window or after MPI ends.
  void release();
  [[nodiscard]] bool empty() const { return win_ == MPI_WIN_NULL; }
  [[nodiscard]] std::byte* mine() const { return mine_; }
  /// Rank `r`'s segment (server side).
  [[nodiscard]] std::byte* of(int r) const;
  /// Memory barrier for the window (MPI_Win_sync): after writing, before reading.
  void sync() const;

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* mine_ = nullptr;
};

/// What a client's slot holds for one step: the arrays of these GridRecord::fields slots
/// (ascending, each once), whole with their halos or interiors only, then the cell types
/// (the same extent) if `types`.
struct SlotLayout {
  std::vector<int> slots;
  bool padded = false;
  bool types = false;
};
/// The layout of a step: info.fields' arrays and cell types (info.write_cell_type) if
/// `write`, the consumer's arrays and cell types if `consume`; padded when consumed.
SlotLayout slot_layout(const StepInfo& info, bool write, const std::vector<FieldSpec>* consume);
/// Bytes of one client's step in its slot.
std::int64_t slot_bytes(const SlotLayout& layout, const LocalGrids& grids);
/// Copies the arrays into `slot` (the layout slot_bytes measures; `copy` false: they are
/// there already, a span's) and appends the layout and the grids' metadata to `msg`;
/// `rank` (the sender's compute rank) becomes every grid's GridRecord::rank on the writer.
void pack_step(const SlotLayout& layout, const LocalGrids& grids, int rank, std::byte* slot, Packer& msg,
               bool copy = true);
/// `like`'s grids with their arrays in `slot` as pack_step lays them out (a write-only
/// layout: interiors, halo 0): Writer::span.
LocalGrids slot_grids(const SlotLayout& layout, const LocalGrids& like, std::byte* slot);
/// Appends one client's grids (layout and metadata from `msg`, data in `slot`) to `into`
/// (halo as shipped: 0 for interiors; GridRecord::fields indexed by the step's slots, as
/// the client had them).
void unpack_grids(Unpacker& msg, const std::byte* slot, LocalGrids& into);

/// Sends a command and waits until it is out.
void send_command(MPI_Comm group, int server, Packer& msg);

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
  std::vector<std::vector<std::byte>> in_;  ///< this command, per client
  std::deque<std::pair<MPI_Request, std::vector<std::byte>>> replies_;  ///< sends in progress
  void reply_all(Packer& msg);  ///< the same reply to every client (nonblocking)
  /// One command from every client (waiting, napping); `op`: theirs, the same from all.
  std::vector<Unpacker> receive(Op& op);
  void open(Unpacker& u);                    ///< opens the file with the writers, replies
  void resize(std::vector<Unpacker>& u);     ///< a new shared window (no reply)
  void step(std::vector<Unpacker>& u);       ///< writes and/or consumes a step, replies
  /// The step written by this rank's Writer: its error, or nothing (`st` filled).
  std::optional<FileError> write(const StepInfo& info, const LocalGrids& grids, WriteStats& st);
  void close();                              ///< closes the file, replies, frees the window
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
  [[nodiscard]] bool consumer_active() const override { return !dedicated_ || consumer_active_; }
  [[nodiscard]] const std::string& path() const override { return path_; }
  [[nodiscard]] const CommonInfo& common() const override { return common_; }
  [[nodiscard]] std::int64_t last_step() const override { return last_step_; }

 private:
  /// write_step and hand_off: `consume` null: write only.
  WriteStats forward(const StepInfo& info, const LocalGrids& grids, bool write, const std::vector<FieldSpec>* consume);
  /// To the server (and serves it, if it is us); `wait`: until the message is out.
  void command(Packer& msg, bool wait);
  void complete_sends(std::size_t n);        ///< waits for the n oldest command sends
  std::vector<std::byte> reply();            ///< the server's next reply to this rank
  void settle_one(WriteStats* into);         ///< the oldest outstanding step's reply; throws its error
  std::optional<FileError> settle_all();     ///< every outstanding step's reply; the first error
  /// Collective: a new window if any rank needs more than slot_capacity_ (`grow`: this
  /// rank's need, or 0); settles every step in flight first.
  void ensure_capacity(std::int64_t need, bool grow_any, WriteStats* st);
  /// Collective: ensure_capacity with the ranks' agreement on growing taken here; true if
  /// the window grew.
  bool fit(std::int64_t need, WriteStats* st);
  SharedSlots& window() { return local_server_ ? local_server_->window() : own_window_; }
  mpi::Comm comm_, node_, leaders_;          ///< node_/leaders_: aggregated only
  MPI_Comm group_ = MPI_COMM_NULL;
  int me_ = 0, server_ = 0;
  std::optional<StepServer> local_server_;   ///< aggregated, on the node leader
  std::string path_;
  CommonInfo common_;
  std::int64_t last_step_ = -1;
  std::int64_t slots_ = 1, slot_capacity_ = 0, next_slot_ = 0;
  SharedSlots own_window_;
  std::deque<std::int64_t> in_flight_;       ///< steps handed off and not yet settled
  std::deque<std::pair<MPI_Request, std::vector<std::byte>>> sends_;  ///< command sends in progress
  bool open_ = false;
  bool failed_ = false;                      ///< a step's error was thrown: a failing close is not news
  bool dedicated_ = false;                   ///< the server is an I/O rank (not the node leader)
  bool consumer_active_ = true;              ///< as the last settled step's reply said
  /// The span lent for the next step (Writer::span), until a hand-off takes or drops it.
  struct Lent {
    SlotLayout layout;
    LocalGrids grids;                        ///< as returned: the pointers to recognise
    WriteStats waited;                       ///< the span's wait and the steps it settled
    const std::byte *begin, *end;            ///< its bytes in this rank's segment
  };
  std::optional<Lent> lent_;
  /// `grids` are the `lent` span's, for a step of `layout`.
  static bool is_lent(const Lent& lent, const SlotLayout& layout, const LocalGrids& grids);
};

}  // namespace rwd::kernel::detail
