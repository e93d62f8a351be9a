// The JSON part of every collector message (docs/collector-protocol.md, "Messages").
//
// Readers are strict about what they need (type, range) and ignore fields they do not
// know, so version 1 can gain optional fields without breaking old clients.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "codec_detail.hpp"
#include "rewind/wire/overloaded.hpp"

namespace rwd::collector {

const char* to_string(ErrorCode c) noexcept {
  switch (c) {
    case ErrorCode::malformed: return "malformed";
    case ErrorCode::bad_version: return "bad_version";
    case ErrorCode::unknown_type: return "unknown_type";
    case ErrorCode::too_large: return "too_large";
    case ErrorCode::bad_argument: return "bad_argument";
    case ErrorCode::unauthorized: return "unauthorized";
    case ErrorCode::busy: return "busy";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::no_such_step: return "no_such_step";
    case ErrorCode::unknown_variable: return "unknown_variable";
    case ErrorCode::internal: return "internal";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::conflict: return "conflict";
  }
  return "unknown";
}

namespace {
constexpr std::array<const char*, 4> kRunStates = {"running", "paused", "stopping", "finished"};
constexpr std::array<const char*, 3> kControlActions = {"pause", "resume", "stop"};

template <typename E, std::size_t N>
std::optional<E> parse_name(const std::array<const char*, N>& names, const std::string& s) {
  for (std::size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  return std::nullopt;
}
}  // namespace

const char* to_string(RunState s) noexcept { return kRunStates.at(static_cast<std::size_t>(s)); }
std::optional<RunState> parse_run_state(const std::string& s) { return parse_name<RunState>(kRunStates, s); }
const char* to_string(ControlAction a) noexcept { return kControlActions.at(static_cast<std::size_t>(a)); }
std::optional<ControlAction> parse_control_action(const std::string& s) { return parse_name<ControlAction>(kControlActions, s); }

std::vector<double> components(const ParamValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return {*d};
  const auto& a = std::get<std::array<double, 3>>(v);
  return {a.begin(), a.end()};
}

ParamValue param_value(std::span<const double> numbers) {
  if (numbers.size() == 3) return std::array<double, 3>{numbers[0], numbers[1], numbers[2]};
  return numbers.empty() ? 0.0 : numbers[0];
}

std::uint64_t PieceMessage::cells() const {
  std::uint64_t n = 1;
  for (const auto c : count) n *= static_cast<std::uint64_t>(c < 0 ? 0 : c);
  return n;
}

MessageType type_of(const Body& body) { return static_cast<MessageType>(body.index() + 1); }

bool is_request(MessageType t) { return t == MessageType::hello || t == MessageType::bye || *capability_of(t) != '\0'; }

const char* capability_of(MessageType t) noexcept {
  switch (t) {
    case MessageType::info_request: return "info";
    case MessageType::steps_request: return "steps";
    case MessageType::window_request: return "window";
    case MessageType::status_request: return "status";
    case MessageType::control_request: return "control";
    case MessageType::parameters_request: return "parameters";
    case MessageType::set_request: return "set";
    case MessageType::branch_request: return "branch";
    default: return "";
  }
}

namespace detail {

namespace {

using wire::Overloaded;

const json& field(const json& j, const char* key) {
  if (!j.is_object()) malformed("expected a JSON object");
  const auto it = j.find(key);
  if (it == j.end()) malformed(std::string("missing field \"") + key + "\"");
  return *it;
}

template <typename T>
T as_int(const json& v, const char* key) {
  static_assert(std::is_integral_v<T>);
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const auto s = v.get<std::int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (s >= std::numeric_limits<T>::min() && s <= std::numeric_limits<T>::max()) return static_cast<T>(s);
    }
  }
  malformed(std::string("field \"") + key + "\" is not an integer in range");
}
template <typename T>
T get_int(const json& j, const char* key) { return as_int<T>(field(j, key), key); }

double as_f64(const json& v, const char* key) {
  if (!v.is_number()) malformed(std::string("field \"") + key + "\" is not a number");
  return v.get<double>();
}
double get_f64(const json& j, const char* key) { return as_f64(field(j, key), key); }

std::string get_str(const json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_string()) malformed(std::string("field \"") + key + "\" is not a string");
  return v.get<std::string>();
}

bool get_bool(const json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_boolean()) malformed(std::string("field \"") + key + "\" is not true/false");
  return v.get<bool>();
}

// A field later revisions added: false when absent (an older peer).
bool optional_bool(const json& j, const char* key) { return j.contains(key) && get_bool(j, key); }

const json& get_list(const json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_array()) malformed(std::string("field \"") + key + "\" is not a list");
  return v;
}

std::vector<std::string> get_strs(const json& j, const char* key) {
  std::vector<std::string> out;
  for (const auto& v : get_list(j, key)) {
    if (!v.is_string()) malformed(std::string("field \"") + key + "\" has a non-string entry");
    out.push_back(v.get<std::string>());
  }
  return out;
}

template <typename T>
std::array<T, 3> get_3(const json& j, const char* key) {
  const auto& v = get_list(j, key);
  if (v.size() != 3) malformed(std::string("field \"") + key + "\" does not have 3 entries");
  std::array<T, 3> out{};
  for (std::size_t a = 0; a < 3; ++a) {
    if constexpr (std::is_floating_point_v<T>) out[a] = as_f64(v[a], key);
    else out[a] = as_int<T>(v[a], key);
  }
  return out;
}

json box_json(const std::array<double, 3>& lo, const std::array<double, 3>& hi) { return {{"lo", lo}, {"hi", hi}}; }
void get_box(const json& j, std::array<double, 3>& lo, std::array<double, 3>& hi) {
  const auto& b = field(j, "box");
  lo = get_3<double>(b, "lo");
  hi = get_3<double>(b, "hi");
}

// --- Steering values -------------------------------------------------------------------

/// encode()'s side of "JSON numbers are finite": nlohmann would write NaN as null.
double finite(double v, const char* key) {
  if (!std::isfinite(v)) throw ProtocolError(ErrorCode::bad_argument, std::string("collector: ") + key + " is not finite");
  return v;
}

json value_json(const ParamValue& v, const std::string& name) {
  if (const auto* d = std::get_if<double>(&v)) return finite(*d, name.c_str());
  const auto& a = std::get<std::array<double, 3>>(v);
  for (const double x : a) finite(x, name.c_str());
  return a;
}

/// A number or a list of exactly 3 numbers.
ParamValue value_from(const json& v, const std::string& name) {
  if (v.is_number()) return as_f64(v, name.c_str());
  if (v.is_array() && v.size() == 3) {
    std::array<double, 3> a{};
    for (std::size_t i = 0; i < 3; ++i) a[i] = as_f64(v[i], name.c_str());
    return a;
  }
  malformed("value of \"" + name + "\" is neither a number nor a list of 3 numbers");
}

json values_json(const ParamValues& values) {
  json j = json::object();
  for (const auto& [name, v] : values) j[name] = value_json(v, name);
  return j;
}

ParamValues get_values(const json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_object()) malformed(std::string("field \"") + key + "\" is not an object");
  ParamValues out;
  for (const auto& [name, x] : v.items()) out.emplace(name, value_from(x, name));
  return out;
}

RunState get_state(const json& j) {
  const auto s = parse_run_state(get_str(j, "state"));
  if (!s) malformed("field \"state\" is not running, paused, stopping or finished");
  return *s;
}

json parameter_json(const ParameterInfo& p) {
  if (!(finite(p.min, "min") <= finite(p.max, "max")))
    throw ProtocolError(ErrorCode::bad_argument, "collector: parameter " + p.name + " has min > max");
  return {{"name", p.name}, {"type", std::holds_alternative<double>(p.value) ? "number" : "vector"},
          {"unit", p.unit}, {"min", p.min}, {"max", p.max}, {"min_open", p.min_open}, {"max_open", p.max_open},
          {"value", value_json(p.value, p.name)}, {"description", p.description}};
}

ParameterInfo parameter_from(const json& j) {
  ParameterInfo p;
  p.name = get_str(j, "name");
  const auto type = get_str(j, "type");
  p.unit = get_str(j, "unit");
  p.min = get_f64(j, "min");
  p.max = get_f64(j, "max");
  p.min_open = optional_bool(j, "min_open");
  p.max_open = optional_bool(j, "max_open");
  p.value = value_from(field(j, "value"), p.name);
  p.description = get_str(j, "description");
  if (type != "number" && type != "vector") malformed("parameter " + p.name + ": type is not number or vector");
  if ((type == "number") != std::holds_alternative<double>(p.value)) malformed("parameter " + p.name + ": value does not match its type");
  if (p.min > p.max) malformed("parameter " + p.name + ": min > max");
  return p;
}

json status_json(const RunStatus& s) {
  if (!(finite(s.steps_per_second, "steps_per_second") >= 0))
    throw ProtocolError(ErrorCode::bad_argument, "collector: steps_per_second is negative");
  json j = {{"state", to_string(s.state)}, {"step", s.step},     {"time", finite(s.time, "time")},
            {"steps_per_second", s.steps_per_second}, {"file", s.file}, {"parent", s.parent},
            {"ranks", s.ranks},          {"clients", s.clients}};
  if (s.futures.empty()) return j;
  json list = json::array();
  for (const auto& f : s.futures) {
    if (!(finite(f.steps_per_second, "steps_per_second") >= 0))
      throw ProtocolError(ErrorCode::bad_argument, "collector: steps_per_second is negative");
    json e = {{"file", f.file},
              {"parent", f.parent},
              {"state", to_string(f.state)},
              {"step", f.step},
              {"time", finite(f.time, "time")},
              {"steps_per_second", f.steps_per_second},
              {"changes", f.changes}};
    if (f.ranks > 0) {  // 1.12
      e["first_rank"] = f.first_rank;
      e["ranks"] = f.ranks;
    }
    list.push_back(std::move(e));
  }
  j["futures"] = std::move(list);  // 1.8
  return j;
}

RunStatus status_from(const json& j) {
  RunStatus s;
  s.state = get_state(j);
  s.step = get_int<std::int64_t>(j, "step");
  s.time = get_f64(j, "time");
  s.steps_per_second = get_f64(j, "steps_per_second");
  if (s.steps_per_second < 0) malformed("field \"steps_per_second\" is negative");
  s.file = get_str(j, "file");
  s.parent = get_str(j, "parent");
  s.ranks = get_int<std::uint32_t>(j, "ranks");
  s.clients = get_int<std::uint32_t>(j, "clients");
  if (!j.contains("futures")) return s;  // 1.8
  for (const auto& f : get_list(j, "futures")) {
    FutureStatus o;
    o.file = get_str(f, "file");
    o.parent = get_str(f, "parent");
    o.state = get_state(f);
    o.step = get_int<std::int64_t>(f, "step");
    o.time = get_f64(f, "time");
    o.steps_per_second = get_f64(f, "steps_per_second");
    if (o.steps_per_second < 0) malformed("field \"steps_per_second\" is negative");
    o.changes = get_strs(f, "changes");
    if (f.contains("ranks")) {  // 1.12
      o.first_rank = get_int<std::uint32_t>(f, "first_rank");
      o.ranks = get_int<std::uint32_t>(f, "ranks");
      if (o.ranks == 0) malformed("field \"ranks\" of a future is 0");
    }
    s.futures.push_back(std::move(o));
  }
  return s;
}

// A reply's arrays, where they are (its vectors, or memory it shares: WindowReply::shared).
std::span<const double> values_of(const WindowReply& b, std::size_t v) {
  return b.shared ? b.shared->values[v] : std::span<const double>(b.values[v]);
}
std::span<const std::uint8_t> cell_types_of(const WindowReply& b) {
  return b.shared ? b.shared->cell_type : std::span<const std::uint8_t>(b.cell_type);
}

void check_window_reply(const WindowReply& b) {
  std::uint64_t cells = 0;
  for (const auto& p : b.pieces) cells += p.cells();
  auto fail = [](const std::string& w) { throw ProtocolError(ErrorCode::bad_argument, "collector: window reply: " + w); };
  if (cells != b.cells) fail("cells (" + std::to_string(b.cells) + ") != sum of pieces' cells (" + std::to_string(cells) + ")");
  const auto n = b.shared ? b.shared->values.size() : b.values.size();
  if (n != b.variables.size()) fail("one value array per variable expected");
  for (std::size_t v = 0; v < n; ++v)
    if (values_of(b, v).size() != cells) fail("a value array does not have one value per cell");
  const auto types = cell_types_of(b);
  if (!types.empty() && types.size() != cells) fail("cell_type does not have one entry per cell");
  if (!b.ranges.empty() && b.ranges.size() != b.variables.size()) fail("one range per variable expected");
}

// The pieces go into the text without a DOM (add_pieces): 512 pieces as nlohmann
// objects took 1.4 ms of a live window's time to its first byte.
json window_reply_json(const WindowReply& b, std::vector<ArrayOut>& arrays) {
  check_window_reply(b);
  for (std::size_t v = 0; v < b.variables.size(); ++v) arrays.push_back({b.variables[v], "f64", std::as_bytes(values_of(b, v))});
  arrays.push_back({"cell_type", "u8", std::as_bytes(cell_types_of(b))});
  json j = {{"step", b.step},   {"time", b.time},          {"file", b.file},
            {"level", b.level}, {"stride", b.stride},      {"box", box_json(b.lo, b.hi)},
            {"cells", b.cells}, {"variables", b.variables}};
  if (b.lod != "uniform") j["lod"] = b.lod;  // 1.10
  if (!b.ranges.empty()) {                   // 1.11: {"u": [min, max], ...}; NaN goes as null
    json ranges = json::object();
    const auto number = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
    for (std::size_t v = 0; v < b.variables.size(); ++v)
      ranges[b.variables[v]] = json::array({number(b.ranges[v][0]), number(b.ranges[v][1])});
    j["ranges"] = std::move(ranges);
  }
  return j;
}

template <class T>
void put_number(std::string& s, T v) {
  char buf[32];
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) {  // as nlohmann writes them (error_handler_t::replace)
      s += "null";
      return;
    }
  }
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  s.append(buf, end);
  if constexpr (std::is_floating_point_v<T>) {
    if (std::find_if(buf, end, [](char c) { return c == '.' || c == 'e'; }) == end) s += ".0";  // stays a float
  }
}

template <class T>
void put_3(std::string& s, const char* key, const std::array<T, 3>& v) {
  s += key;
  for (std::size_t a = 0; a < 3; ++a) {
    s += a == 0 ? '[' : ',';
    put_number(s, v[a]);
  }
  s += ']';
}

void put_piece(std::string& s, const PieceMessage& p) {
  put_3(s, "{\"count\":", p.count);
  put_3(s, ",\"first\":", p.first);
  s += ",\"level\":";
  put_number(s, p.level);
  put_3(s, ",\"origin\":", p.origin);
  s += ",\"row\":";
  put_number(s, p.row);
  put_3(s, ",\"spacing\":", p.spacing);
  s += ",\"stride\":";
  put_number(s, p.stride);
  s += ",\"uid\":";
  put_number(s, p.uid);
  s += '}';
}

/// A window's level-of-detail rule (1.10): "uniform" or "adaptive", else malformed.
std::string get_lod(const json& j, const char* message) {
  std::string lod = get_str(j, "lod");
  if (lod != "uniform" && lod != "adaptive")
    malformed(std::string(message) + " field \"lod\" is \"" + lod.substr(0, 32) +
              "\", not \"uniform\" or \"adaptive\"");
  return lod;
}

/// A window reply's optional ranges (1.11): an object naming only `variables`, each
/// [min, max] of numbers or nulls (NaN); a variable it does not name gets NaN, NaN.
std::vector<std::array<double, 2>> get_ranges(const json& j, const std::vector<std::string>& variables) {
  const auto& r = field(j, "ranges");
  if (!r.is_object()) malformed("window_reply field \"ranges\" is not an object");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::array<double, 2>> out(variables.size(), {nan, nan});
  for (const auto& [name, v] : r.items()) {
    const auto at = std::find(variables.begin(), variables.end(), name);
    if (at == variables.end())
      malformed("window_reply field \"ranges\" names \"" + name.substr(0, 32) + "\", not a variable");
    if (!v.is_array() || v.size() != 2)
      malformed("window_reply range of \"" + name.substr(0, 32) + "\" is not [min, max]");
    auto& o = out[static_cast<std::size_t>(at - variables.begin())];
    for (std::size_t e = 0; e < 2; ++e) o[e] = v[e].is_null() ? nan : as_f64(v[e], "ranges");
  }
  return out;
}

WindowReply window_reply_from(const json& j, std::vector<ArrayIn>&& arrays) {
  WindowReply b;
  b.step = get_int<std::int64_t>(j, "step");
  b.time = get_f64(j, "time");
  b.file = get_str(j, "file");
  b.level = get_int<std::int32_t>(j, "level");
  b.stride = get_int<std::int32_t>(j, "stride");
  get_box(j, b.lo, b.hi);
  b.cells = get_int<std::uint64_t>(j, "cells");
  if (j.contains("lod")) b.lod = get_lod(j, "window_reply");  // 1.10
  b.variables = get_strs(j, "variables");
  if (j.contains("ranges")) b.ranges = get_ranges(j, b.variables);  // 1.11
  // 1.7: the pieces as the first array (a binary table), or, as before, a JSON list.
  const bool table = !arrays.empty() && arrays.front().dtype == kPieceDtype;
  if (table) {
    if (j.contains("pieces")) malformed("window reply has both a piece table and a JSON list of pieces");
    b.pieces = pieces_from_table(arrays.front().u8);
    arrays.erase(arrays.begin());
  } else {
    for (const auto& pj : get_list(j, "pieces")) {
      PieceMessage p;
      p.row = get_int<std::int64_t>(pj, "row");
      p.uid = get_int<std::uint64_t>(pj, "uid");
      p.level = get_int<std::int32_t>(pj, "level");
      p.first = get_3<std::int32_t>(pj, "first");
      p.count = get_3<std::int32_t>(pj, "count");
      p.stride = get_int<std::int32_t>(pj, "stride");
      p.origin = get_3<double>(pj, "origin");
      p.spacing = get_3<double>(pj, "spacing");
      check_piece(p);
      b.pieces.push_back(p);
    }
  }
  std::uint64_t cells = 0;
  for (const auto& p : b.pieces) cells += p.cells();
  if (cells != b.cells) malformed("cells does not equal the sum of the pieces' cells");
  for (const auto& a : arrays)
    if (a.dtype == kPieceDtype) malformed("a piece table that is not the window reply's first array");
  if (arrays.size() != b.variables.size() + 1) malformed("window reply needs one array per variable plus cell_type");
  for (std::size_t v = 0; v < b.variables.size(); ++v) {
    auto& a = arrays[v];
    if (a.name != b.variables[v] || a.dtype != "f64" || a.f64.size() != cells)
      malformed("array " + std::to_string(v) + " is not " + std::to_string(cells) + " f64 values of " + b.variables[v]);
    b.values.push_back(std::move(a.f64));
  }
  auto& ct = arrays.back();
  if (ct.name != "cell_type" || ct.dtype != "u8" || (!ct.u8.empty() && ct.u8.size() != cells))
    malformed("last array is not cell_type (u8, one per cell or none)");
  b.cell_type = std::move(ct.u8);
  return b;
}

}  // namespace

void malformed(const std::string& what) { throw ProtocolError(ErrorCode::malformed, "collector: " + what); }

void add_pieces(const Body& body, std::string& text) {
  const auto* b = std::get_if<WindowReply>(&body);
  if (b == nullptr || text.empty() || text.back() != '}') return;
  text.pop_back();
  text.reserve(text.size() + 16 + 160 * b->pieces.size());
  text += text.size() > 1 ? ",\"pieces\":[" : "\"pieces\":[";
  for (std::size_t i = 0; i < b->pieces.size(); ++i) {
    if (i > 0) text += ',';
    put_piece(text, b->pieces[i]);
  }
  text += "]}";
}

namespace {

json info_json(const ServerInfo& i) {
  json vars = json::array();
  for (const auto& v : i.variables) vars.push_back({{"name", v.name}, {"unit", v.unit}});
  return {{"files", i.files},
          {"variables", std::move(vars)},
          {"domain", box_json(i.domain_lo, i.domain_hi)},
          {"dim", i.dim},
          {"block", i.block},
          {"refinement", i.refinement},
          {"live", i.live}};
}

json branch_request_json(const BranchRequest& b) {
  json j = {{"from", b.from}, {"values", values_json(b.values)}};
  if (!b.file.empty()) j["file"] = b.file;
  if (!b.output.empty()) j["output"] = b.output;
  if (b.futures.empty()) return j;
  json list = json::array();
  for (const auto& f : b.futures) {
    json o = {{"values", values_json(f.values)}};
    if (!f.output.empty()) o["output"] = f.output;
    list.push_back(std::move(o));
  }
  j["futures"] = std::move(list);  // 1.8
  return j;
}

}  // namespace

json to_json(const Body& body, std::vector<ArrayOut>& arrays) {
  return std::visit(
      Overloaded{
          [](const Hello& b) -> json {
            json j = {{"protocol", b.protocol}, {"token", b.token}, {"client", b.client}};
            if (!b.codecs.empty()) j["codecs"] = b.codecs;
            if (b.piece_table) j["piece_table"] = true;  // 1.7
            return j;
          },
          [](const HelloReply& b) -> json {
            json j = {{"server", b.server},
                      {"protocol", b.protocol},
                      {"capabilities", b.capabilities},
                      {"codec", to_string(b.codec)}};
            if (b.piece_table) j["piece_table"] = true;  // 1.7
            return j;
          },
          [](const InfoRequest&) -> json { return json::object(); },
          [](const InfoReply& b) -> json { return info_json(b.info); },
          [](const StepsRequest&) -> json { return json::object(); },
          [](const StepsReply& b) -> json {
            json steps = json::array();
            for (const auto& s : b.steps)
              steps.push_back({{"step", s.step}, {"time", s.time}, {"kind", s.kind}, {"file", s.file}});
            return {{"steps", std::move(steps)}};
          },
          [](const WindowRequest& b) -> json {
            json j = {{"box", box_json(b.lo, b.hi)}, {"budget", b.budget}, {"time", b.time}, {"variables", b.variables}};
            if (!b.file.empty()) j["file"] = b.file;
            if (b.lod != "uniform") j["lod"] = b.lod;  // 1.10
            return j;
          },
          [&](const WindowReply& b) -> json { return window_reply_json(b, arrays); },
          [](const ErrorReply& b) -> json {
            return {{"code", static_cast<std::uint32_t>(b.code)}, {"name", to_string(b.code)}, {"message", b.message}};
          },
          [](const Bye&) -> json { return json::object(); },
          [](const StatusRequest&) -> json { return json::object(); },
          [](const StatusReply& b) -> json { return status_json(b.status); },
          [](const ControlRequest& b) -> json {
            json j = {{"action", b.action}};
            if (!b.file.empty()) j["file"] = b.file;  // 1.8
            return j;
          },
          [](const ControlReply& b) -> json {
            return {{"state", to_string(b.state)}, {"step", b.step}, {"time", finite(b.time, "time")}};
          },
          [](const ParametersRequest&) -> json { return json::object(); },
          [](const ParametersReply& b) -> json {
            json list = json::array();
            for (const auto& p : b.parameters) list.push_back(parameter_json(p));
            return {{"parameters", std::move(list)}};
          },
          [](const SetRequest& b) -> json {
            json j = {{"values", values_json(b.values)}};
            if (!b.file.empty()) j["file"] = b.file;  // 1.8
            return j;
          },
          [](const SetReply& b) -> json {
            return {{"step", b.step}, {"time", finite(b.time, "time")}, {"values", values_json(b.values)}};
          },
          [](const BranchRequest& b) -> json { return branch_request_json(b); },
          [](const BranchReply& b) -> json {
            json j = {{"file", b.file}, {"parent", b.parent}, {"step", b.step}, {"time", finite(b.time, "time")}};
            if (!b.files.empty()) j["files"] = b.files;  // 1.8
            return j;
          },
      },
      body);
}

namespace {

ServerInfo info_from(const json& j) {
  ServerInfo i;
  i.files = get_strs(j, "files");
  for (const auto& v : get_list(j, "variables")) i.variables.push_back({get_str(v, "name"), get_str(v, "unit")});
  const auto& d = field(j, "domain");
  i.domain_lo = get_3<double>(d, "lo");
  i.domain_hi = get_3<double>(d, "hi");
  i.dim = get_int<int>(j, "dim");
  i.block = get_3<int>(j, "block");
  i.refinement = get_int<int>(j, "refinement");
  i.live = get_bool(j, "live");
  return i;
}

BranchRequest branch_request_from(const json& j) {
  BranchRequest b;
  b.from = get_str(j, "from");
  if (j.contains("file")) b.file = get_str(j, "file");
  b.values = get_values(j, "values");
  if (j.contains("output")) b.output = get_str(j, "output");
  if (j.contains("futures"))  // 1.8
    for (const auto& f : get_list(j, "futures"))
      b.futures.push_back({get_values(f, "values"), f.contains("output") ? get_str(f, "output") : std::string()});
  return b;
}

}  // namespace

Body from_json(MessageType t, const json& j, std::vector<ArrayIn>&& arrays) {
  if (!j.is_object()) malformed("the JSON part is not an object");
  if (t != MessageType::window_reply && !arrays.empty()) malformed("this message type carries no arrays");
  switch (t) {
    case MessageType::hello: {
      Hello b{get_int<std::uint32_t>(j, "protocol"), get_str(j, "token"), get_str(j, "client"), {}};
      if (j.contains("codecs")) b.codecs = get_strs(j, "codecs");  // 1.2
      if (j.contains("piece_table")) b.piece_table = get_bool(j, "piece_table");  // 1.7
      return b;
    }
    case MessageType::hello_reply: {
      HelloReply b{get_str(j, "server"), get_int<std::uint32_t>(j, "protocol"), get_strs(j, "capabilities")};
      if (j.contains("codec")) {  // 1.2; a 1.1 server sends zstd
        const auto c = parse_codec(get_str(j, "codec"));
        if (!c) malformed("unknown codec \"" + get_str(j, "codec") + "\"");
        b.codec = *c;
      }
      if (j.contains("piece_table")) b.piece_table = get_bool(j, "piece_table");  // 1.7
      return b;
    }
    case MessageType::info_request: return InfoRequest{};
    case MessageType::info_reply: return InfoReply{info_from(j)};
    case MessageType::steps_request: return StepsRequest{};
    case MessageType::steps_reply: {
      StepsReply b;
      for (const auto& s : get_list(j, "steps"))
        b.steps.push_back({get_int<std::int64_t>(s, "step"), get_f64(s, "time"), get_str(s, "kind"), get_str(s, "file")});
      return b;
    }
    case MessageType::window_request: {
      WindowRequest b;
      get_box(j, b.lo, b.hi);
      b.budget = get_int<std::uint64_t>(j, "budget");
      b.time = get_str(j, "time");
      b.variables = get_strs(j, "variables");
      if (j.contains("file")) b.file = get_str(j, "file");
      if (j.contains("lod")) b.lod = get_lod(j, "window_request");  // 1.10
      return b;
    }
    case MessageType::window_reply: return window_reply_from(j, std::move(arrays));
    case MessageType::error_reply: {
      const auto code = get_int<std::uint32_t>(j, "code");
      if (code < 1 || code > static_cast<std::uint32_t>(ErrorCode::conflict)) malformed("unknown error code " + std::to_string(code));
      return ErrorReply{static_cast<ErrorCode>(code), get_str(j, "message")};
    }
    case MessageType::bye: return Bye{};
    case MessageType::status_request: return StatusRequest{};
    case MessageType::status_reply: return StatusReply{status_from(j)};
    case MessageType::control_request:
      return ControlRequest{get_str(j, "action"), j.contains("file") ? get_str(j, "file") : std::string()};
    case MessageType::control_reply: return ControlReply{get_state(j), get_int<std::int64_t>(j, "step"), get_f64(j, "time")};
    case MessageType::parameters_request: return ParametersRequest{};
    case MessageType::parameters_reply: {
      ParametersReply b;
      for (const auto& p : get_list(j, "parameters")) b.parameters.push_back(parameter_from(p));
      return b;
    }
    case MessageType::set_request:
      return SetRequest{get_values(j, "values"), j.contains("file") ? get_str(j, "file") : std::string()};
    case MessageType::set_reply: return SetReply{get_int<std::int64_t>(j, "step"), get_f64(j, "time"), get_values(j, "values")};
    case MessageType::branch_request: return branch_request_from(j);
    case MessageType::branch_reply:
      return BranchReply{get_str(j, "file"), get_str(j, "parent"), get_int<std::int64_t>(j, "step"), get_f64(j, "time"),
                         j.contains("files") ? get_strs(j, "files") : std::vector<std::string>{}};
  }
  throw ProtocolError(ErrorCode::unknown_type, "collector: unknown message type " + std::to_string(static_cast<unsigned>(t)));
}

}  // namespace detail
}  // namespace rwd::collector
