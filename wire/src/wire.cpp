// Shared frame header and byte codec (see wire.hpp).
#include "rewind/wire/wire.hpp"

#include <cstring>

namespace rwd::wire {

void fail(Fault fault, const char* who, const std::string& what) { throw WireError(fault, std::string(who) + ": " + what); }

void ByteWriter::put_count(std::size_t n) {
  if (n > 0xffffffffu) fail(Fault::too_large, who_, "list of " + std::to_string(n) + " entries");
  put(static_cast<std::uint32_t>(n));
}

void ByteWriter::put_string(const std::string& s) {
  put_count(s.size());
  put_bytes(std::as_bytes(std::span(s.data(), s.size())));
}

std::size_t ByteReader::get_count(std::size_t min_bytes) {
  const auto n = get<std::uint32_t>();
  if (min_bytes > 0 && n > left() / min_bytes) fail(Fault::malformed, who_, "count " + std::to_string(n) + " exceeds the message");
  return n;
}

std::span<const std::byte> ByteReader::get_bytes(std::size_t n) {
  need(n);
  auto s = in_.subspan(pos_, n);
  pos_ += n;
  return s;
}

std::string ByteReader::get_string() {
  const auto b = get_bytes(get_count(1));
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

void ByteReader::finish() const {
  if (pos_ != in_.size()) fail(Fault::malformed, who_, std::to_string(left()) + " trailing bytes after the payload");
}

void begin_frame(ByteWriter& w, const FrameFormat& f, std::uint16_t type, std::uint32_t request_id) {
  w.out.clear();
  w.put_bytes(std::as_bytes(std::span(f.magic)));
  w.put(f.version);
  w.put(type);
  w.put(request_id);
  w.put(std::uint32_t{0});
  w.put(std::uint64_t{0});  // length, patched by end_frame
}

void end_frame(ByteWriter& w, const FrameFormat& f) {
  const std::uint64_t len = w.out.size() - kHeaderSize;
  if (len > f.max_payload) fail(Fault::too_large, f.name, "payload of " + std::to_string(len) + " bytes");
  for (std::size_t b = 0; b < 8; ++b) w.out[16 + b] = static_cast<std::byte>((len >> (8 * b)) & 0xffu);
}

FrameHeader read_header(const FrameFormat& f, std::span<const std::byte> header) {
  if (header.size() < kHeaderSize) fail(Fault::malformed, f.name, "message shorter than its header");
  if (std::memcmp(header.data(), f.magic.data(), 4) != 0) fail(Fault::malformed, f.name, "bad magic");
  ByteReader r(header.subspan(4, kHeaderSize - 4), f.name);
  const auto version = r.get<std::uint16_t>();
  if (version != f.version)
    fail(Fault::bad_version, f.name,
         "protocol version " + std::to_string(version) + ", this build speaks " + std::to_string(f.version));
  FrameHeader h;
  h.type = r.get<std::uint16_t>();
  h.request_id = r.get<std::uint32_t>();
  if (r.get<std::uint32_t>() != 0) fail(Fault::malformed, f.name, "reserved header field is not 0");
  h.length = r.get<std::uint64_t>();
  if (h.length > f.max_payload) fail(Fault::too_large, f.name, "payload of " + std::to_string(h.length) + " bytes announced");
  return h;
}

FrameHeader check_frame(const FrameFormat& f, std::span<const std::byte> frame) {
  const auto h = read_header(f, frame);
  if (frame.size() - kHeaderSize != h.length)
    fail(Fault::malformed, f.name,
         "header announces " + std::to_string(h.length) + " payload bytes, frame has " + std::to_string(frame.size() - kHeaderSize));
  return h;
}

}  // namespace rwd::wire
