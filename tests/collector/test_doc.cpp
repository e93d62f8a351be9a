// docs/collector-protocol.md against the code: its example frames decode to what the
// encoder writes, its tables of message types, error codes and codecs match the enums,
// and every JSON field the encoder writes is named in its message's row.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "rewind/collector/messages.hpp"

using namespace rwd::collector;

namespace {

std::string doc_text() {
  std::ifstream in(REWIND_COLLECTOR_DOC);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::vector<std::byte>> hex_blocks(const std::string& doc) {
  std::vector<std::vector<std::byte>> out;
  const std::regex block("```hex\\n([0-9a-f \\n]*)```");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), block); it != std::sregex_iterator(); ++it) {
    std::istringstream hex((*it)[1].str());
    std::vector<std::byte> bytes;
    for (std::string b; hex >> b;) bytes.push_back(static_cast<std::byte>(std::stoi(b, nullptr, 16)));
    out.push_back(bytes);
  }
  return out;
}

std::string hex_of(const std::vector<std::byte>& bytes) {
  std::string out;
  char b[4];
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(bytes[i]));
    out += b;
    out += (i % 16 == 15 || i + 1 == bytes.size()) ? '\n' : ' ';
  }
  return out;
}

/// The message types' names, in type order (1 .. 20).
const char* const kTypeNames[] = {
    "hello",          "hello_reply",      "info_request",    "info_reply",    "steps_request",      "steps_reply",
    "window_request", "window_reply",     "error_reply",     "bye",           "status_request",     "status_reply",
    "control_request", "control_reply",   "parameters_request", "parameters_reply", "set_request",  "set_reply",
    "branch_request", "branch_reply"};

/// The row of message type `name` in the doc's table of messages ("" if none).
std::string message_row(const std::string& doc, const std::string& name) {
  const std::regex row("\\n\\| [0-9]+ \\| `" + name + "` \\|[^\\n]*");
  std::smatch m;
  return std::regex_search(doc, m, row) ? m.str() : std::string();
}

/// Every body but the window reply (its fields have a table of their own), each with every
/// optional field set, so that the encoder writes every field it knows.
std::vector<Body> bodies_with_every_field() {
  const ParamValues v{{"physics.nu", 0.01}};
  RunStatus st{RunState::running, 4, 0.04, 2.0, "a.h5", "p.h5", 2, 1};
  st.futures = {{"a.h5", "p.h5", RunState::paused, 4, 0.04, 0.5, {"physics.nu=0.01"}}};
  ServerInfo info;
  info.variables = {{"p", "Pa"}};
  return {Hello{1, "t", "c", {"none"}, true},
          HelloReply{"s", 1, {"info"}, Codec::none, true},
          InfoRequest{},
          InfoReply{info},
          StepsRequest{},
          StepsReply{{{1, 0.1, "checkpoint", "a.h5"}}},
          WindowRequest{{0, 0, 0}, {1, 1, 1}, 10, "live", {"p"}, "a.h5"},
          ErrorReply{ErrorCode::conflict, "ended"},
          Bye{},
          StatusRequest{},
          StatusReply{st},
          ControlRequest{"pause", "a.h5"},
          ControlReply{RunState::paused, 4, 0.04},
          ParametersRequest{},
          ParametersReply{{{"physics.nu", 0.01, "m^2/s", 0, 10, "viscosity", true, false}}},
          SetRequest{v, "a.h5"},
          SetReply{5, 0.05, v},
          BranchRequest{"latest", "p.h5", v, "b.h5"},
          BranchRequest{"latest", "p.h5", {}, "", {{v, "b1.h5"}, {{}, "b2.h5"}}},
          BranchReply{"b1.h5", "p.h5", 4, 0.04, {"b1.h5", "b2.h5"}}};
}

}  // namespace

TEST_CASE("the doc's row of each message names every field the encoder writes", "[collector][doc]") {
  const auto doc = doc_text();
  for (const auto& body : bodies_with_every_field()) {
    const std::string name = kTypeNames[static_cast<unsigned>(type_of(body)) - 1];
    const auto row = message_row(doc, name);
    CAPTURE(name);
    REQUIRE_FALSE(row.empty());
    const auto j = nlohmann::json::parse(json_text(body));
    for (const auto& [key, value] : j.items()) {
      CAPTURE(key);
      CHECK(row.find("`" + key + "`") != std::string::npos);
      // The fields of a list's entries ({file, parent, ...}), named as words in the row.
      if (!value.is_array()) continue;
      for (const auto& entry : value) {
        if (!entry.is_object()) continue;
        for (auto it = entry.begin(); it != entry.end(); ++it) {
          const std::string& inner = it.key();
          CAPTURE(inner);
          CHECK(std::regex_search(row, std::regex("\\b" + inner + "\\b")));
        }
      }
    }
  }
}

TEST_CASE("the doc's example frames are what the encoder writes", "[collector][doc]") {
  const auto blocks = hex_blocks(doc_text());
  REQUIRE(blocks.size() == 4);
  const auto m = decode(blocks[0], kRequestLimits);
  CHECK(m.request_id == 7);
  CHECK(std::holds_alternative<InfoRequest>(m.body));
  CHECK(encode(Message{7, InfoRequest{}}) == blocks[0]);
  const auto c = decode(blocks[1], kRequestLimits);
  CHECK(c.request_id == 8);
  REQUIRE(std::holds_alternative<ControlRequest>(c.body));
  CHECK(std::get<ControlRequest>(c.body).action == "pause");
  CHECK(encode(Message{8, ControlRequest{"pause"}}) == blocks[1]);
  const auto h = decode(blocks[3], kRequestLimits);
  CHECK(h.request_id == 1);
  REQUIRE(std::holds_alternative<Hello>(h.body));
  CHECK(std::get<Hello>(h.body).codecs == std::vector<std::string>{"none", "zstd"});
  CHECK(encode(Message{1, Hello{1, "", "c", {"none", "zstd"}}}) == blocks[3]);
  // 1.7: a window reply whose pieces travel as a piece table.
  WindowReply w;
  w.step = 1;
  w.time = 0.5;
  w.file = "f.h5";
  w.hi = {1, 1, 1};
  w.cells = 2;
  PieceMessage p;
  p.row = 3;
  p.uid = 77;
  p.count = {2, 1, 1};
  p.spacing = {0.5, 1, 1};
  w.pieces = {p};
  w.variables = {"p"};
  w.values = {ValueArray{1.5, 2.5}};
  EncodeOptions table;
  table.codec = Codec::none;
  table.piece_table = true;
  const auto bytes = encode(Message{2, w}, table);
  if (bytes != blocks[2]) FAIL_CHECK("the encoder writes:\n" + hex_of(bytes));
  const auto back = decode(blocks[2]);
  REQUIRE(std::holds_alternative<WindowReply>(back.body));
  const auto& b = std::get<WindowReply>(back.body);
  REQUIRE(b.pieces.size() == 1);
  CHECK((b.pieces[0].row == 3 && b.pieces[0].uid == 77 && b.pieces[0].spacing[0] == 0.5));
  CHECK(b.values[0][1] == 2.5);
}

TEST_CASE("the doc's table of codecs names every codec the code speaks", "[collector][doc]") {
  const auto doc = doc_text();
  for (const Codec c : {Codec::zstd, Codec::none}) {
    const std::string row = std::string("| `") + to_string(c) + "` |";
    CAPTURE(row);
    CHECK(doc.find(row) != std::string::npos);
    CHECK(parse_codec(to_string(c)) == c);
  }
  // A hello without codecs is a 1.1 client: zstd, as the doc says.
  CHECK(doc.find("absent = `[\"zstd\"]`") != std::string::npos);
  CHECK(choose_codec({}) == Codec::zstd);
}

TEST_CASE("the doc's tables name every message type and error code", "[collector][doc]") {
  const auto doc = doc_text();
  CHECK(doc.find("# Collector protocol — version " + std::to_string(kProtocolVersion) + ", revision " + kProtocolRevision) !=
        std::string::npos);
  const auto& types = kTypeNames;
  for (unsigned t = 1; t <= 20; ++t) {
    const std::string row = "| " + std::to_string(t) + " | `" + types[t - 1] + "` |";
    CAPTURE(row);
    CHECK(doc.find(row) != std::string::npos);
    // The code's numbering: a body of that alternative has that type.
    Body b;
    b = [&]() -> Body {
      switch (t) {
        case 1: return Hello{};
        case 2: return HelloReply{};
        case 3: return InfoRequest{};
        case 4: return InfoReply{};
        case 5: return StepsRequest{};
        case 6: return StepsReply{};
        case 7: return WindowRequest{};
        case 8: return WindowReply{};
        case 9: return ErrorReply{};
        case 10: return Bye{};
        case 11: return StatusRequest{};
        case 12: return StatusReply{};
        case 13: return ControlRequest{};
        case 14: return ControlReply{};
        case 15: return ParametersRequest{};
        case 16: return ParametersReply{};
        case 17: return SetRequest{};
        case 18: return SetReply{};
        case 19: return BranchRequest{};
        default: return BranchReply{};
      }
    }();
    CHECK(static_cast<unsigned>(type_of(b)) == t);
    // A request's capability is its name without "_request".
    const std::string name = types[t - 1], cap = capability_of(static_cast<MessageType>(t));
    if (name.ends_with("_request")) CHECK(name == cap + "_request");
  }
  for (std::uint32_t c = 1; c <= static_cast<std::uint32_t>(ErrorCode::conflict); ++c) {
    const std::string row = "| " + std::to_string(c) + " | `" + to_string(static_cast<ErrorCode>(c)) + "` |";
    CAPTURE(row);
    CHECK(doc.find(row) != std::string::npos);
  }
}
