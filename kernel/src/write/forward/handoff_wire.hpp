// Private: the hand-off's wire (forward.hpp): the commands a compute rank sends the rank
// that writes its steps, and the replies, as plain bytes.
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
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/writer.hpp"

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

/// Sends a command and waits until it is out.
void send_command(MPI_Comm group, int server, Packer& msg);

}  // namespace rwd::kernel::detail
