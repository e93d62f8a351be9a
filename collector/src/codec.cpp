// Frame, JSON part and zstd-compressed arrays of a collector message
// (docs/collector-protocol.md, "Frame" and "Payload").
#include <zstd.h>

#include <bit>
#include <cstring>
#include <memory>

#include "codec_detail.hpp"
#include "rewind/nbserver/wire.hpp"

namespace rwd::collector {

namespace wire = rwd::nbserver::wire;
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

/// Compresses `raw` to `dst` (ZSTD_compressBound(raw.size()) bytes); the size written.
std::size_t compress(std::span<const std::byte> raw, std::byte* dst, int level) {
  if (raw.empty()) return 0;
  const std::size_t n = ZSTD_compress(dst, ZSTD_compressBound(raw.size()), raw.data(), raw.size(), level);
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
  const std::size_t n = ZSTD_decompress(dst, raw, z.data(), z.size());
  if (ZSTD_isError(n)) malformed("array " + name + ": zstd: " + ZSTD_getErrorName(n));
  if (n != raw) malformed("array " + name + ": decompressed to " + std::to_string(n) + " bytes, JSON says " + std::to_string(raw));
}

std::vector<detail::ArrayIn> read_arrays(const json& j, wire::Reader& r, const Limits& limits) {
  std::vector<detail::ArrayIn> out;
  const auto it = j.find("arrays");
  if (it == j.end()) return out;
  if (!it->is_array()) malformed("\"arrays\" is not a list");
  // First the sizes: compressed sizes must add up to exactly the bytes left, raw
  // sizes to no more than the cap, before anything is allocated.
  struct Entry { std::string name, dtype; std::uint64_t raw, zbytes; };
  std::vector<Entry> entries;
  std::uint64_t zsum = 0, rawsum = 0;
  for (const auto& a : *it) {
    if (!a.is_object()) malformed("an \"arrays\" entry is not an object");
    Entry e;
    const auto name = a.find("name"), dtype = a.find("dtype"), raw = a.find("raw"), zb = a.find("zbytes");
    if (name == a.end() || !name->is_string() || dtype == a.end() || !dtype->is_string() || raw == a.end() ||
        !raw->is_number_unsigned() || zb == a.end() || !zb->is_number_unsigned())
      malformed("an \"arrays\" entry lacks name, dtype, raw or zbytes");
    e = {name->get<std::string>(), dtype->get<std::string>(), raw->get<std::uint64_t>(), zb->get<std::uint64_t>()};
    const std::uint64_t width = e.dtype == "f64" ? 8 : e.dtype == "u8" ? 1 : 0;
    if (width == 0) malformed("array " + e.name + ": unknown dtype " + e.dtype);
    if (e.raw % width != 0) malformed("array " + e.name + ": raw size is not a whole number of values");
    if (e.zbytes > r.left()) malformed("array " + e.name + ": compressed size exceeds the message");
    if (e.raw > limits.max_raw)
      throw ProtocolError(ErrorCode::too_large, "collector: array " + e.name + " of " + std::to_string(e.raw) + " bytes exceeds the cap");
    zsum += e.zbytes;
    rawsum += e.raw;
    if (zsum > r.left()) malformed("compressed array sizes exceed the message");
    if (rawsum > limits.max_raw)
      throw ProtocolError(ErrorCode::too_large, "collector: arrays of " + std::to_string(rawsum) + " bytes exceed the cap");
    entries.push_back(std::move(e));
  }
  if (zsum != r.left())
    malformed("compressed arrays hold " + std::to_string(zsum) + " bytes, the frame " + std::to_string(r.left()));
  for (const auto& e : entries) {
    detail::ArrayIn a{e.name, e.dtype, {}, {}};
    const auto z = r.get_bytes(e.zbytes);
    if (e.dtype == "f64") {
      a.f64.resize(e.raw / 8);
      decompress(z, a.f64.data(), e.raw, e.name);
    } else {
      a.u8.resize(e.raw);
      decompress(z, a.u8.data(), e.raw, e.name);
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

std::vector<std::byte> encode(const Message& m, std::uint64_t max_payload, int zstd_level) {
  std::vector<std::byte> out;
  encode(m, out, max_payload, zstd_level);
  return out;
}

void encode(const Message& m, std::vector<std::byte>& out, std::uint64_t max_payload, int zstd_level) {
  const auto f = format(max_payload);
  try {
    std::vector<detail::ArrayOut> arrays;
    json j = detail::to_json(m.body, arrays);
    thread_local Scratch scratch;
    std::size_t bound = 0;
    for (const auto& a : arrays) bound += a.bytes.empty() ? 0 : ZSTD_compressBound(a.bytes.size());
    std::byte* z = scratch.reserve(bound);
    std::vector<std::span<const std::byte>> packed;
    if (!arrays.empty()) {
      j["arrays"] = json::array();
      for (const auto& a : arrays) {
        packed.emplace_back(z, compress(a.bytes, z, zstd_level));
        z += packed.back().size();
        j["arrays"].push_back({{"name", a.name}, {"dtype", a.dtype}, {"raw", a.bytes.size()}, {"zbytes", packed.back().size()}});
      }
    }
    const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
    wire::Writer w("collector");
    w.out = std::move(out);
    w.out.clear();
    std::size_t total = kHeaderSize + 4 + text.size();
    for (const auto& p : packed) total += p.size();
    if (total - kHeaderSize > max_payload)
      throw ProtocolError(ErrorCode::too_large, "collector: payload of " + std::to_string(total - kHeaderSize) + " bytes exceeds the cap");
    w.out.reserve(total);
    wire::begin_frame(w, f, static_cast<std::uint16_t>(type_of(m.body)), m.request_id);
    w.put_string(text);
    for (const auto& p : packed) w.put_bytes(p);
    wire::end_frame(w, f);
    scratch.trim();
    out = std::move(w.out);
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

std::string json_text(const Body& body) {
  std::vector<detail::ArrayOut> arrays;
  return detail::to_json(body, arrays).dump(-1, ' ', false, json::error_handler_t::replace);
}

FrameHeader read_header(std::span<const std::byte> header, std::uint64_t max_payload) {
  try {
    const auto h = wire::read_header(format(max_payload), header);
    return {static_cast<MessageType>(h.type), h.request_id, h.length};
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

Message decode(std::span<const std::byte> frame, const Limits& limits) {
  try {
    const auto h = wire::check_frame(format(limits.max_payload), frame);
    if (h.type < 1 || h.type > static_cast<std::uint16_t>(MessageType::branch_reply))
      throw ProtocolError(ErrorCode::unknown_type, "collector: unknown message type " + std::to_string(h.type));
    wire::Reader r(frame.subspan(kHeaderSize), "collector");
    const auto text = r.get_bytes(r.get_count(1));
    json j = json::parse(reinterpret_cast<const char*>(text.data()), reinterpret_cast<const char*>(text.data()) + text.size(),
                         nullptr, false);
    if (j.is_discarded()) malformed("the JSON part does not parse");
    auto arrays = read_arrays(j, r, limits);
    r.finish();
    Message m;
    m.request_id = h.request_id;
    try {
      m.body = detail::from_json(static_cast<MessageType>(h.type), j, std::move(arrays));
    } catch (const json::exception& e) {
      malformed(std::string("JSON field: ") + e.what());
    }
    return m;
  } catch (const wire::WireError& e) {
    throw ProtocolError(code_of(e.fault()), e.what());
  }
}

}  // namespace rwd::collector
