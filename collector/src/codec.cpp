// Frame, JSON part and arrays (zstd-compressed or as they are) of a collector message
// (docs/collector-protocol.md, "Frame" and "Payload").
#include <sys/mman.h>
#include <zstd.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>

#include "codec_detail.hpp"
#include "rewind/wire/wire.hpp"

namespace rwd::collector {

namespace wire = rwd::wire;
using detail::json;
using detail::malformed;

static_assert(std::endian::native == std::endian::little,
              "the collector sends arrays in host order; a big-endian port must byte-swap them");

namespace {

wire::FrameFormat format(std::uint64_t max_payload) { return {{'R', 'W', 'C', 'L'}, kProtocolVersion, max_payload, "collector"}; }

ErrorCode code_of(wire::Fault f) {
  switch (f) {
    case wire::Fault::bad_version: return ErrorCode::bad_version;
    case wire::Fault::too_large: return ErrorCode::too_large;
    case wire::Fault::malformed: break;
  }
  return ErrorCode::malformed;
}

/// Compression output, kept per thread between frames: a fresh buffer for every large
/// reply costs a zero fill and a page fault per 4 KiB (half of a 33 MB reply's encode
/// time on the benchmark VM). Released after a frame above kKeepScratch.
class Scratch {
 public:
  std::byte* reserve(std::size_t n) {
    if (n > size_) {
      buf_.reset(new std::byte[n]);  // uninitialised: zstd writes before anyone reads
      size_ = n;
    }
    return buf_.get();
  }
  void trim() {
    if (size_ > kKeepScratch) buf_.reset(), size_ = 0;
  }

 private:
  static constexpr std::size_t kKeepScratch = std::size_t{256} << 20;
  std::unique_ptr<std::byte[]> buf_;
  std::size_t size_ = 0;
};

/// zstd's contexts, one per thread for the thread's life: ZSTD_compress and
/// ZSTD_decompress make and free one per call, whose tables are fresh pages each time.
struct ZstdContexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ZstdContexts() = default;
  ZstdContexts(const ZstdContexts&) = delete;
  ZstdContexts& operator=(const ZstdContexts&) = delete;
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
ZstdContexts& zstd_contexts() {
  thread_local ZstdContexts z;
  if (z.c == nullptr || z.d == nullptr) throw std::bad_alloc();
  return z;
}

/// Compresses `raw` to `dst` (ZSTD_compressBound(raw.size()) bytes); the size written.
std::size_t compress(std::span<const std::byte> raw, std::byte* dst, int level) {
  if (raw.empty()) return 0;
  const std::size_t n =
      ZSTD_compressCCtx(zstd_contexts().c, dst, ZSTD_compressBound(raw.size()), raw.data(), raw.size(), level);
  if (ZSTD_isError(n)) throw ProtocolError(ErrorCode::internal, std::string("collector: zstd: ") + ZSTD_getErrorName(n));
  return n;
}

/// Decompresses into exactly `raw` bytes at `dst`: a stream that would produce more
/// (a bomb) or less fails, and nothing is ever written beyond `raw` bytes.
void decompress(std::span<const std::byte> z, void* dst, std::size_t raw, const std::string& name) {
  if (raw == 0) {
    if (!z.empty()) malformed("array " + name + ": compressed bytes for an empty array");
    return;
  }
  const auto declared = ZSTD_getFrameContentSize(z.data(), z.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) malformed("array " + name + ": not a zstd frame");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != raw)
    malformed("array " + name + ": zstd frame holds " + std::to_string(declared) + " bytes, JSON says " + std::to_string(raw));
  const std::size_t n = ZSTD_decompressDCtx(zstd_contexts().d, dst, raw, z.data(), z.size());
  if (ZSTD_isError(n)) malformed("array " + name + ": zstd: " + ZSTD_getErrorName(n));
  if (n != raw) malformed("array " + name + ": decompressed to " + std::to_string(n) + " bytes, JSON says " + std::to_string(raw));
}

/// One "arrays" entry of a received JSON part.
struct ArraySpec {
  std::string name, dtype;
  std::uint64_t raw = 0, zbytes = 0;
  Codec codec = Codec::zstd;
};

/// The "arrays" entries of `j`, checked before anything is read or allocated: encoded
/// sizes must add up to exactly the `left` bytes after the JSON, raw sizes to no more
/// than the cap, and an array sent as it is (codec none) must be exactly its raw size.
std::vector<ArraySpec> array_specs(const json& j, std::uint64_t left, const Limits& limits) {
  std::vector<ArraySpec> entries;
  const auto it = j.find("arrays");
  if (it == j.end()) {
    if (left != 0) malformed(std::to_string(left) + " bytes after the JSON of a message without arrays");
    return entries;
  }
  if (!it->is_array()) malformed("\"arrays\" is not a list");
  std::uint64_t zsum = 0, rawsum = 0;
  for (const auto& a : *it) {
    if (!a.is_object()) malformed("an \"arrays\" entry is not an object");
    const auto name = a.find("name"), dtype = a.find("dtype"), raw = a.find("raw"), zb = a.find("zbytes");
    const auto codec = a.find("codec");
    if (name == a.end() || !name->is_string() || dtype == a.end() || !dtype->is_string() || raw == a.end() ||
        !raw->is_number_unsigned() || zb == a.end() || !zb->is_number_unsigned())
      malformed("an \"arrays\" entry lacks name, dtype, raw or zbytes");
    ArraySpec e{name->get<std::string>(), dtype->get<std::string>(), raw->get<std::uint64_t>(), zb->get<std::uint64_t>()};
    if (codec != a.end()) {  // absent: a 1.1 server, zstd
      const auto c = codec->is_string() ? parse_codec(codec->get<std::string>()) : std::nullopt;
      if (!c) malformed("array " + e.name + ": unknown codec " + codec->dump());
      e.codec = *c;
    }
    const std::uint64_t width = e.dtype == "f64"                 ? 8
                                : e.dtype == "u8"                ? 1
                                : e.dtype == detail::kPieceDtype ? kPieceRecordBytes
                                                                 : 0;
    if (width == 0) malformed("array " + e.name + ": unknown dtype " + e.dtype);
    if (e.raw % width != 0) malformed("array " + e.name + ": raw size is not a whole number of values");
    if (e.codec == Codec::none && e.zbytes != e.raw)
      malformed("array " + e.name + ": codec none, but zbytes (" + std::to_string(e.zbytes) + ") != raw (" +
                std::to_string(e.raw) + ")");
    if (e.zbytes > left) malformed("array " + e.name + ": encoded size exceeds the message");
    if (e.raw > limits.max_raw)
      throw ProtocolError(ErrorCode::too_large, "collector: array " + e.name + " of " + std::to_string(e.raw) + " bytes exceeds the cap");
    zsum += e.zbytes;
    rawsum += e.raw;
    if (zsum > left) malformed("encoded array sizes exceed the message");
    if (rawsum > limits.max_raw)
      throw ProtocolError(ErrorCode::too_large, "collector: arrays of " + std::to_string(rawsum) + " bytes exceed the cap");
    entries.push_back(std::move(e));
  }
  if (zsum != left) malformed("encoded arrays hold " + std::to_string(zsum) + " bytes, the frame " + std::to_string(left));
  return entries;
}

/// Reads one checked array into `dst` (`e.raw` bytes): as it is, or decompressed.
void read_array(const ArraySpec& e, PayloadSource& source, std::byte* dst) {
  if (e.codec == Codec::none) {
    if (e.raw > 0) source.read(dst, e.raw);
    return;
  }
  decompress(e.zbytes > 0 ? source.next(e.zbytes) : std::span<const std::byte>{}, dst, e.raw, e.name);
}

/// A frame already in memory.
class MemorySource final : public PayloadSource {
 public:
  explicit MemorySource(std::span<const std::byte> in) : in_(in) {}
  void read(std::byte* dst, std::size_t n) override {
    const auto b = next(n);
    std::memcpy(dst, b.data(), n);
  }
  std::span<const std::byte> next(std::size_t n) override {
    if (n > in_.size() - pos_) malformed("message truncated");
    pos_ += n;
    return in_.subspan(pos_ - n, n);
  }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

/// Asks for transparent huge pages on the whole 2 MiB pages of a fresh array, before its
/// first touch: a new 8 MiB array otherwise costs 2048 page faults, most of a fresh
/// window's cost on the client (the kernel's default is "madvise": only asked-for
/// ranges get huge pages). Advice only: ignored where unsupported.
void advise_huge_pages(void* data, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto p = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t lo = (p + kHuge - 1) & ~(kHuge - 1), hi = (p + bytes) & ~(kHuge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

void put_length(std::vector<std::byte>& frame, std::uint64_t length) {
  for (std::size_t b = 0; b < 8; ++b) frame[16 + b] = static_cast<std::byte>((length >> (8 * b)) & 0xffu);
}

/// True if zstd at `level` is likely to shrink `raw` below kWorthCompressing: three
/// samples of 16 KiB (start, middle, end) are compressed first, so that an array of
/// float64 fields, which hardly compresses, costs ~0.1 ms instead of its whole encode.
bool worth_compressing(std::span<const std::byte> raw, int level) {
  constexpr std::size_t kSample = 16 << 10;
  if (raw.size() <= 3 * kSample) return true;  // small: compressing it costs little
  thread_local std::vector<std::byte> z(ZSTD_compressBound(kSample));
  std::size_t packed = 0;
  for (const std::size_t at : {std::size_t{0}, raw.size() / 2, raw.size() - kSample})
    packed += compress(raw.subspan(at, kSample), z.data(), level);
  return static_cast<double>(packed) < kWorthCompressing * static_cast<double>(3 * kSample);
}

/// An array as it goes on the wire: its codec and bytes (compressed ones in this
/// thread's scratch, valid until the next encode() on this thread).
struct Packed {
  Codec codec;
  std::span<const std::byte> bytes;
};

/// Each array's wire bytes and codec: compressed into this thread's scratch, or, in
/// codec none or when it does not pay, the message's own bytes.
std::vector<Packed> pack(const std::vector<detail::ArrayOut>& arrays, const EncodeOptions& options) {
  std::vector<Packed> out;
  if (options.codec == Codec::none) {
    for (const auto& a : arrays) out.push_back({Codec::none, a.bytes});
    return out;
  }
  thread_local Scratch scratch;
  scratch.trim();  // after the last frame, which no longer needs it
  std::size_t bound = 0;
  for (const auto& a : arrays) bound += a.bytes.empty() ? 0 : ZSTD_compressBound(a.bytes.size());
  std::byte* z = scratch.reserve(bound);
  const bool may_skip = options.raw_when_incompressible;
  for (const auto& a : arrays) {
    if (may_skip && !worth_compressing(a.bytes, options.zstd_level)) {
      out.push_back({Codec::none, a.bytes});
      continue;
    }
    const std::size_t n = compress(a.bytes, z, options.zstd_level);
    if (may_skip && !a.bytes.empty() &&
        static_cast<double>(n) >= kWorthCompressing * static_cast<double>(a.bytes.size())) {
      out.push_back({Codec::none, a.bytes});  // the samples promised more than the whole gave
      continue;
    }
    out.push_back({Codec::zstd, {z, n}});
    z += n;
  }
  return out;
}

/// The arrays after the head: the first `copy_first` (bytes the encoder made, e.g. a
/// piece table) and compressed ones up to the first sent as it is are copied into the
/// head (one buffer, whose capacity a connection reuses: a zstd frame is all head, as
/// before 1.6), the later compressed ones into out.packed, the others are spans into
/// the message.
void place_arrays(const std::vector<Packed>& packed, std::size_t copy_first, wire::ByteWriter& w, FrameParts& out) {
  out.arrays.clear();
  out.packed.clear();
  std::size_t i = 0, in_head = 0;
  for (; i < packed.size() && (i < copy_first || packed[i].codec == Codec::zstd); ++i)
    in_head += packed[i].bytes.size();
  w.out.reserve(w.out.size() + in_head);
  for (std::size_t k = 0; k < i; ++k) w.put_bytes(packed[k].bytes);
  std::size_t later = 0;
  for (std::size_t k = i; k < packed.size(); ++k)
    if (packed[k].codec == Codec::zstd) later += packed[k].bytes.size();
  out.packed.resize(later);  // once: the spans below point into it
  std::byte* at = out.packed.data();
  for (; i < packed.size(); ++i) {
    if (packed[i].codec == Codec::none) {
      out.arrays.push_back(packed[i].bytes);
      continue;
    }
    std::memcpy(at, packed[i].bytes.data(), packed[i].bytes.size());
    out.arrays.emplace_back(at, packed[i].bytes.size());
    at += packed[i].bytes.size();
  }
}

}  // namespace

const char* to_string(Codec c) noexcept { return c == Codec::none ? "none" : "zstd"; }

std::optional<Codec> parse_codec(const std::string& s) {
  if (s == "zstd") return Codec::zstd;
  if (s == "none") return Codec::none;
  return std::nullopt;
}

std::optional<Codec> choose_codec(const std::vector<std::string>& offered) {
  if (offered.empty()) return Codec::zstd;
  for (const auto& name : offered)
    if (const auto c = parse_codec(name)) return c;
  return std::nullopt;
}

std::uint64_t FrameParts::size() const {
  std::uint64_t n = head.size();
  for (const auto& a : arrays) n += a.size();
  return n;
}

std::span<const std::byte> PayloadSource::next(std::size_t n) {
  buf_.resize(n);
  read(buf_.data(), n);
  return buf_;
}

std::vector<std::byte> encode(const Message& m, std::uint64_t max_payload, int zstd_level) {
  return encode(m, EncodeOptions{Codec::zstd, max_payload, zstd_level});
}

std::vector<std::byte> encode(const Message& m, const EncodeOptions& options) {
  FrameParts parts;
  encode(m, parts, options);
  for (const auto& a : parts.arrays) parts.head.insert(parts.head.end(), a.begin(), a.end());
  return std::move(parts.head);
}

void encode(const Message& m, FrameParts& out, const EncodeOptions& options) {
  try {
    std::vector<detail::ArrayOut> arrays;
    json j = detail::to_json(m.body, arrays);
    // 1.7: a window reply's pieces as a binary table, its first array, in the head.
    const auto* reply = std::get_if<WindowReply>(&m.body);
    const bool table = options.piece_table && reply != nullptr;
    wire::ByteWriter table_bytes("collector");  // copied into the head below
    if (table) {
      detail::put_piece_table(reply->pieces, table_bytes);
      arrays.insert(arrays.begin(), detail::ArrayOut{"pieces", detail::kPieceDtype, table_bytes.out});
    }
    const auto packed = pack(arrays, options);
    std::uint64_t length = 0;
    if (!arrays.empty()) {
      j["arrays"] = json::array();
      for (std::size_t i = 0; i < arrays.size(); ++i) {
        j["arrays"].push_back({{"name", arrays[i].name},
                               {"dtype", arrays[i].dtype},
                               {"raw", arrays[i].bytes.size()},
                               {"zbytes", packed[i].bytes.size()},
                               {"codec", to_string(packed[i].codec)}});
        length += packed[i].bytes.size();
      }
    }
    std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (!table) detail::add_pieces(m.body, text);
    length += 4 + text.size();
    if (length > options.max_payload)
      throw ProtocolError(ErrorCode::too_large,
                          "collector: payload of " + std::to_string(length) + " bytes exceeds the cap");
    wire::ByteWriter w("collector");
    w.out = std::move(out.head);
    w.out.clear();
    w.out.reserve(kHeaderSize + 4 + text.size());
    wire::begin_frame(w, format(options.max_payload), static_cast<std::uint16_t>(type_of(m.body)), m.request_id);
    w.put_string(text);
    place_arrays(packed, table ? 1 : 0, w, out);
    put_length(w.out, length);
    out.head = std::move(w.out);
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

std::string json_text(const Body& body) {
  std::vector<detail::ArrayOut> arrays;
  std::string text = detail::to_json(body, arrays).dump(-1, ' ', false, json::error_handler_t::replace);
  detail::add_pieces(body, text);
  return text;
}

FrameHeader read_header(std::span<const std::byte> header, std::uint64_t max_payload) {
  try {
    const auto h = wire::read_header(format(max_payload), header);
    return {static_cast<MessageType>(h.type), h.request_id, h.length};
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

Message decode_payload(const FrameHeader& h, PayloadSource& source, const Limits& limits, WindowReply* reuse) {
  const auto type = static_cast<std::uint16_t>(h.type);
  if (type < 1 || type > static_cast<std::uint16_t>(MessageType::branch_reply))
    throw ProtocolError(ErrorCode::unknown_type, "collector: unknown message type " + std::to_string(type));
  if (h.length < 4) malformed("message truncated");
  std::array<std::byte, 4> count{};
  source.read(count.data(), count.size());
  const std::uint64_t json_bytes = wire::ByteReader(count, "collector").get<std::uint32_t>();
  if (json_bytes > h.length - 4) malformed("JSON length exceeds the message");
  std::string text(json_bytes, '\0');
  source.read(reinterpret_cast<std::byte*>(text.data()), text.size());
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) malformed("the JSON part does not parse");
  const auto specs = array_specs(j, h.length - 4 - json_bytes, limits);
  std::vector<detail::ArrayIn> arrays;
  std::size_t next_f64 = 0;
  for (const auto& e : specs) {
    detail::ArrayIn a{e.name, e.dtype, {}, {}};
    if (e.dtype == detail::kPieceDtype) {  // 1.7: never the reused cell types
      a.u8.resize(e.raw);
      read_array(e, source, reinterpret_cast<std::byte*>(a.u8.data()));
    } else if (e.dtype == "f64") {
      if (reuse != nullptr && next_f64 < reuse->values.size()) a.f64 = std::move(reuse->values[next_f64++]);
      if (a.f64.capacity() < e.raw / 8) {
        a.f64.reserve(e.raw / 8);
        advise_huge_pages(a.f64.data(), e.raw);
      }
      a.f64.resize(e.raw / 8);
      read_array(e, source, reinterpret_cast<std::byte*>(a.f64.data()));
    } else {
      if (reuse != nullptr) a.u8 = std::move(reuse->cell_type);
      a.u8.resize(e.raw);
      read_array(e, source, reinterpret_cast<std::byte*>(a.u8.data()));
    }
    arrays.push_back(std::move(a));
  }
  Message m;
  m.request_id = h.request_id;
  try {
    m.body = detail::from_json(h.type, j, std::move(arrays));
  } catch (const json::exception& e) {
    malformed(std::string("JSON field: ") + e.what());
  }
  return m;
}

Message decode(std::span<const std::byte> frame, const Limits& limits) {
  FrameHeader h;
  try {
    const auto w = wire::check_frame(format(limits.max_payload), frame);
    h = {static_cast<MessageType>(w.type), w.request_id, w.length};
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
  MemorySource source(frame.subspan(kHeaderSize));
  return decode_payload(h, source, limits);
}

}  // namespace rwd::collector
