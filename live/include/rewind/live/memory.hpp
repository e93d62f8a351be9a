// Memory the live collector shares with the compute ranks of its node, so that a live
// window's values are copied once on the server side: the compute ranks extract their
// cells straight into the reply's arrays, and the collector writes the socket from there
// (docs/collector-protocol.md, "Live runs"; bench/live/HISTORY.md, "Live windows (online)").
//
// A segment is an anonymous memory file (memfd) of the collector. A compute rank maps it
// through /proc/PID/fd/FD, after checking that it runs on the same node (host name and
// boot id) and that the mapping starts with the segment's magic and random token, so a
// rank of another node, or one that may not open the file, simply does not attach and
// sends its values over MPI instead. Nothing is named in the file system: the memory is
// freed when the last process unmaps it, a killed job included.
//
// Layout: a 64-byte header (magic "RWDLIVE1", the token, the data bytes), then the data.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rwd::live {

/// What a compute rank needs to map a segment (sent in the window command).
struct SegmentName {
  std::string node;         ///< node_id() of the creating process
  int pid = 0;              ///< the creating process
  int fd = -1;              ///< its descriptor of the memory file
  std::uint64_t token = 0;  ///< random; also in the segment's header
  std::uint64_t bytes = 0;  ///< data bytes after the header
  bool operator==(const SegmentName&) const = default;
};

/// This node's identity: host name and kernel boot id ("host/boot-id").
const std::string& node_id();

class SharedSegment {
 public:
  static constexpr std::uint64_t kHeaderBytes = 64;

  SharedSegment() = default;
  SharedSegment(SharedSegment&& o) noexcept;
  SharedSegment& operator=(SharedSegment&& o) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();

  /// A new segment of `bytes` data bytes, its pages allocated. Throws std::system_error.
  static SharedSegment create(std::uint64_t bytes);
  /// Maps the segment `name` of another process of this node; nullopt if it is of
  /// another node or cannot be opened, or its header does not match `name`. When it is
  /// of this node but cannot be mapped, `why` (if given) says what failed (e.g. "open
  /// /proc/1234/fd/7: No such file or directory": a rank in a PID namespace of its own).
  static std::optional<SharedSegment> attach(const SegmentName& name, std::string* why = nullptr);

  [[nodiscard]] std::byte* data() const { return base_ == nullptr ? nullptr : base_ + kHeaderBytes; }
  [[nodiscard]] std::uint64_t bytes() const { return name_.bytes; }
  [[nodiscard]] const SegmentName& name() const { return name_; }
  [[nodiscard]] explicit operator bool() const { return base_ != nullptr; }

 private:
  void release() noexcept;
  std::byte* base_ = nullptr;
  int fd_ = -1;  ///< kept open by the creator only (others open it by /proc/PID/fd/FD)
  SegmentName name_;
};

}  // namespace rwd::live
