// The collector codec: every message round-trips; every lie in a frame is refused
// with a code and without reading out of bounds.
// Over 500 lines: one case per message type and per kind of lie; kept together so the
// list of what the codec refuses reads as one table.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <tuple>

#include "frame_util.hpp"

using namespace rwd::collector;
using rwd::collector::test::make_frame;
using rwd::collector::test::zstd;

namespace {

ErrorCode decode_error(std::span<const std::byte> frame, Limits limits = kReplyLimits) {
  try {
    (void)decode(frame, limits);
  } catch (const ProtocolError& e) {
    return e.code();
  }
  FAIL("decode accepted a bad frame");
  return ErrorCode::internal;
}

WindowReply sample_window() {
  test::FakeService s;
  WindowRequest r;
  r.budget = 37;
  r.variables = {"p", "u"};
  r.hi = {1, 2, 3};
  return s.window(r);
}

std::vector<Body> steering_bodies() {
  test::SteerableService s;
  const ParamValues values{{"physics.nu", 0.02}, {"boundary.xmin.velocity", std::array<double, 3>{1.5, 0, -2e-3}}};
  return {StatusRequest{},
          StatusReply{s.status()},
          StatusReply{{RunState::finished, 7, 0.07, 0.0, "b.h5", "a.h5", 3, 0}},
          ControlRequest{"pause"},
          ControlReply{RunState::paused, 101, 1.01},
          ParametersRequest{},
          ParametersReply{s.parameters()},
          SetRequest{values},
          SetReply{102, 1.02, values},
          BranchRequest{"t=0.5", "", {}, ""},
          BranchRequest{"#-2", "run.h5", values, "/tmp/b.h5"},
          BranchReply{"run.branch50.h5", "run.h5", 50, 0.5},
          // Revision 1.8: futures (their fields one by one: test_codec_futures.cpp).
          StatusReply{{RunState::running, 7, 0.07, 1.0, "a.h5", "p.h5", 2, 0,
                       {{"a.h5", "p.h5", RunState::paused, 7, 0.07, 0.0, {"x=1"}}}}},
          ControlRequest{"stop", "a.h5"},
          SetRequest{values, "a.h5"},
          BranchRequest{"latest", "a.h5", {}, "", {{values, "a1.h5"}, {{}, ""}}},
          BranchReply{"a1.h5", "a.h5", 7, 0.07, {"a1.h5", "a.branch7.h5"}}};
}

std::vector<Body> every_body() {
  ServerInfo info = test::FakeService{}.info();
  info.refinement = 3;
  return {Hello{1, "tok", "test", {}},
          HelloReply{"srv", 1, {"info", "window"}},
          InfoRequest{},
          InfoReply{info},
          StepsRequest{},
          StepsReply{test::FakeService{}.steps()},
          WindowRequest{{-1, -2, -3}, {1, 2, 3.5}, 1000, "t=0.25", {"p", "u"}, "branch.h5"},
          WindowRequest{{0, 0, 0}, {0, 0, 0}, 1, "#-1", {}, ""},
          sample_window(),
          ErrorReply{ErrorCode::no_such_step, "no step 7"},
          ErrorReply{ErrorCode::conflict, "the run finished"},
          Bye{}};
}

}  // namespace

TEST_CASE("every message type round-trips and re-encodes to the same bytes", "[collector]") {
  auto bodies = every_body();
  const auto steering = steering_bodies();
  bodies.insert(bodies.end(), steering.begin(), steering.end());
  std::set<MessageType> types;
  for (const auto& b : bodies) types.insert(type_of(b));
  REQUIRE(types.size() == 20);  // every type, and types are numbered 1 .. 20
  CHECK(static_cast<int>(*types.rbegin()) == 20);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const Message m{static_cast<std::uint32_t>(100 + i), bodies[i]};
    const auto bytes = encode(m);
    CAPTURE(i);
    const auto h = read_header(bytes, kMaxReplyBytes);
    CHECK(h.type == type_of(bodies[i]));
    CHECK(h.request_id == 100 + i);
    CHECK(h.length == bytes.size() - kHeaderSize);
    const Message back = decode(bytes);
    CHECK(back.request_id == m.request_id);
    CHECK(back.body.index() == m.body.index());
    CHECK(encode(back) == bytes);
  }
}

TEST_CASE("steering messages keep every field", "[collector][steer]") {
  const auto round = [](const Body& b) { return decode(encode(Message{9, b})).body; };
  const RunStatus st{RunState::stopping, -3, 2.5, 0.75, "b.h5", "a.h5", 4, 2};
  const auto s = std::get<StatusReply>(round(StatusReply{st})).status;
  CHECK(s.state == RunState::stopping);
  CHECK(s.step == -3);
  CHECK(s.time == 2.5);
  CHECK(s.steps_per_second == 0.75);
  CHECK(s.file == "b.h5");
  CHECK(s.parent == "a.h5");
  CHECK(s.ranks == 4);
  CHECK(s.clients == 2);
  CHECK(std::get<ControlRequest>(round(ControlRequest{"resume"})).action == "resume");
  const auto c = std::get<ControlReply>(round(ControlReply{RunState::paused, 12, 0.125}));
  CHECK((c.state == RunState::paused && c.step == 12 && c.time == 0.125));

  const auto params = test::SteerableService{}.parameters();
  const auto p = std::get<ParametersReply>(round(ParametersReply{params})).parameters;
  REQUIRE(p.size() == 2);
  CHECK(p[0].name == "boundary.xmin.velocity");
  CHECK(std::get<std::array<double, 3>>(p[0].value) == std::array<double, 3>{1, 0, 0});
  CHECK(p[1].name == "physics.nu");
  CHECK(std::get<double>(p[1].value) == 0.01);
  CHECK((p[1].unit == "m^2/s" && p[1].min == 1e-9 && p[1].max == 10 && p[1].description == "kinematic viscosity"));
  CHECK(json_text(ParametersReply{params}).find(R"("type":"vector")") != std::string::npos);
  CHECK((!p[1].min_open && !p[1].max_open));
  const auto open = std::get<ParametersReply>(round(ParametersReply{{{"physics.nu", 1.0, "", 0, 10, "", true}}}));
  CHECK((open.parameters[0].min_open && !open.parameters[0].max_open));  // (0, 10], revision 1.4

  const ParamValues v{{"a", 1.0}, {"b", std::array<double, 3>{-1, 0.5, 1e300}}};
  CHECK(std::get<SetRequest>(round(SetRequest{v})).values == v);
  const auto sr = std::get<SetReply>(round(SetReply{5, 0.05, v}));
  CHECK((sr.step == 5 && sr.time == 0.05 && sr.values == v));
  const auto b = std::get<BranchRequest>(round(BranchRequest{"42", "run.h5", v, "out.h5"}));
  CHECK((b.from == "42" && b.file == "run.h5" && b.values == v && b.output == "out.h5"));
  const auto b0 = std::get<BranchRequest>(round(BranchRequest{"latest", "", {}, ""}));
  CHECK((b0.file.empty() && b0.output.empty() && b0.values.empty()));
  CHECK(json_text(BranchRequest{"latest", "", {}, ""}) == R"({"from":"latest","values":{}})");
  const auto br = std::get<BranchReply>(round(BranchReply{"x.h5", "run.h5", 40, 0.4}));
  CHECK((br.file == "x.h5" && br.parent == "run.h5" && br.step == 40 && br.time == 0.4));
  CHECK(std::get<ErrorReply>(round(ErrorReply{ErrorCode::unsupported, "offline"})).code == ErrorCode::unsupported);
}

TEST_CASE("encode refuses steering values the decoder would refuse", "[collector][steer]") {
  const double nan = std::nan("");
  const auto refused = [](const Body& b) {
    try {
      (void)encode(Message{1, b});
    } catch (const ProtocolError& e) {
      return e.code() == ErrorCode::bad_argument;
    }
    return false;
  };
  CHECK(refused(SetRequest{{{"a", nan}}}));
  CHECK(refused(SetRequest{{{"a", std::array<double, 3>{0, INFINITY, 0}}}}));
  CHECK(refused(StatusReply{{RunState::running, 1, 0.1, -1.0, "f", "", 1, 0}}));
  CHECK(refused(StatusReply{{RunState::running, 1, 0.1, nan, "f", "", 1, 0}}));
  CHECK(refused(ControlReply{RunState::running, 1, INFINITY}));
  CHECK(refused(ParametersReply{{{"x", 1.0, "", 2, 1, ""}}}));  // min > max
  CHECK(refused(ParametersReply{{{"x", 1.0, "", nan, 1, ""}}}));
}

TEST_CASE("a window reply keeps every value, piece and cell type", "[collector]") {
  const auto w = sample_window();
  const auto back = std::get<WindowReply>(decode(encode(Message{1, w})).body);
  REQUIRE(back.pieces.size() == w.pieces.size());
  CHECK(back.pieces[1].uid == w.pieces[1].uid);
  CHECK(back.pieces[1].count == w.pieces[1].count);
  CHECK(back.cells == 37);
  CHECK(back.values == w.values);
  CHECK(back.cell_type == w.cell_type);
  CHECK(back.variables == std::vector<std::string>{"p", "u"});
  // NaN and infinities travel in the binary arrays unchanged.
  auto odd = w;
  odd.values[0][3] = std::nan("");
  odd.values[1][4] = -INFINITY;
  const auto b2 = std::get<WindowReply>(decode(encode(Message{1, odd})).body);
  CHECK(std::isnan(b2.values[0][3]));
  CHECK(b2.values[1][4] == -INFINITY);
}

TEST_CASE("a window reply's pieces are JSON any parser reads back exactly", "[collector]") {
  // The pieces are written without a DOM (one live window has hundreds): each field
  // parsed by nlohmann and by the decoder must be the number that went in, the doubles
  // floats even when integral, the largest UIDs and the shortest round trips included.
  auto w = sample_window();
  w.pieces[0].uid = std::numeric_limits<std::uint64_t>::max();
  w.pieces[0].row = std::numeric_limits<std::int64_t>::min();
  w.pieces[0].origin = {100.0, -0.0, 1e-5};
  w.pieces[0].spacing = {1e20, 0.1, 5e-324};
  w.pieces[1].origin = {1.0 / 3.0, -2.5e-300, 123456789.0};
  const auto j = nlohmann::json::parse(json_text(w));
  REQUIRE(j.at("pieces").size() == w.pieces.size());
  for (std::size_t i = 0; i < w.pieces.size(); ++i) {
    const auto& p = w.pieces[i];
    const auto& q = j.at("pieces")[i];
    CHECK(q.at("uid").get<std::uint64_t>() == p.uid);
    CHECK(q.at("row").get<std::int64_t>() == p.row);
    CHECK(q.at("level").get<std::int32_t>() == p.level);
    CHECK(q.at("stride").get<std::int32_t>() == p.stride);
    CHECK(q.at("first").get<std::array<std::int32_t, 3>>() == p.first);
    CHECK(q.at("count").get<std::array<std::int32_t, 3>>() == p.count);
    for (std::size_t a = 0; a < 3; ++a) {
      CHECK(q.at("origin")[a].is_number_float());
      CHECK(q.at("spacing")[a].is_number_float());
      CHECK(q.at("origin")[a].get<double>() == p.origin[a]);
      CHECK(q.at("spacing")[a].get<double>() == p.spacing[a]);
    }
  }
  CHECK(std::signbit(j.at("pieces")[0].at("origin")[1].get<double>()));
  const auto back = std::get<WindowReply>(decode(encode(Message{1, w})).body);
  CHECK(back.pieces[0].uid == w.pieces[0].uid);
  CHECK(back.pieces[0].spacing == w.pieces[0].spacing);
  CHECK(back.pieces[1].origin == w.pieces[1].origin);
  // A piece corner that is not finite is refused by the decoder, as before (null).
  w.pieces[1].origin[0] = std::nan("");
  CHECK(decode_error(encode(Message{1, w})) == ErrorCode::malformed);
}

TEST_CASE("encode refuses a window reply whose arrays disagree with its pieces", "[collector]") {
  auto w = sample_window();
  w.values[1].pop_back();
  CHECK_THROWS_AS(encode(Message{1, w}), ProtocolError);
  w = sample_window();
  w.cells += 1;
  CHECK_THROWS_AS(encode(Message{1, w}), ProtocolError);
}

TEST_CASE("every truncation of every message is refused", "[collector]") {
  auto bodies = every_body();
  const auto steering = steering_bodies();
  bodies.insert(bodies.end(), steering.begin(), steering.end());
  for (const auto& b : bodies) {
    const auto bytes = encode(Message{1, b});
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      CAPTURE(n);
      CHECK(decode_error(std::span(bytes).first(n)) == ErrorCode::malformed);
    }
  }
}

TEST_CASE("bad header fields are refused with their code", "[collector]") {
  const auto good = encode(Message{3, InfoRequest{}});
  auto f = good;
  f[0] = std::byte{'X'};
  CHECK(decode_error(f) == ErrorCode::malformed);  // magic
  CHECK(decode_error(make_frame(3, "{}", {}, 2)) == ErrorCode::bad_version);
  CHECK(decode_error(make_frame(3, "{}", {}, 1, "RWNB")) == ErrorCode::malformed);  // the nbserver's magic
  CHECK(decode_error(make_frame(0, "{}")) == ErrorCode::unknown_type);
  CHECK(decode_error(make_frame(21, "{}")) == ErrorCode::unknown_type);
  CHECK(decode_error(make_frame(0xffff, "{}")) == ErrorCode::unknown_type);
  f = good;
  f[12] = std::byte{1};  // reserved
  CHECK(decode_error(f) == ErrorCode::malformed);
  f = good;
  f[16] = static_cast<std::byte>(static_cast<unsigned>(f[16]) + 1);  // length one more than sent
  CHECK(decode_error(f) == ErrorCode::malformed);
  f = good;
  f.push_back(std::byte{0});  // one byte more than announced
  CHECK(decode_error(f) == ErrorCode::malformed);
  f = good;
  f[23] = std::byte{0x40};  // announces 2^62 bytes
  CHECK(decode_error(f) == ErrorCode::too_large);
  CHECK_THROWS_AS(read_header(f, kMaxRequestBytes), ProtocolError);
  // The JSON length prefix lies.
  f = good;
  f[24] = std::byte{0xff};
  CHECK(decode_error(f) == ErrorCode::malformed);
}

TEST_CASE("requests are capped at 64 KiB", "[collector]") {
  WindowRequest r{{0, 0, 0}, {1, 1, 1}, 10, "latest", {}, ""};
  r.variables.assign(2000, std::string(40, 'v'));
  CHECK_THROWS_AS(encode(Message{1, r}, kMaxRequestBytes), ProtocolError);
  const auto big = encode(Message{1, r});
  CHECK(decode_error(big, kRequestLimits) == ErrorCode::too_large);
  CHECK(read_header(big, kMaxReplyBytes).length > kMaxRequestBytes);
}

TEST_CASE("bad JSON and bad fields are malformed", "[collector]") {
  const std::uint16_t window_request = 7, error_reply = 9, hello = 1;
  const std::string box = R"("box":{"lo":[0,0,0],"hi":[1,1,1]})";
  CHECK_NOTHROW(decode(make_frame(window_request, "{" + box + R"(,"budget":5,"time":"latest","variables":[]})")));
  for (const std::string& j : std::vector<std::string>{
           "{",
           "not json",
           "[]",
           "{}",
           "{" + box + R"(,"budget":-5,"time":"latest","variables":[]})",
           "{" + box + R"(,"budget":5.5,"time":"latest","variables":[]})",
           "{" + box + R"(,"budget":"5","time":"latest","variables":[]})",
           "{" + box + R"(,"budget":5,"time":3,"variables":[]})",
           "{" + box + R"(,"budget":5,"time":"latest","variables":[1]})",
           "{" + box + R"(,"budget":5,"time":"latest","variables":"p"})",
           R"({"box":{"lo":[0,0],"hi":[1,1,1]},"budget":5,"time":"latest","variables":[]})",
           R"({"box":{"lo":[0,0,null],"hi":[1,1,1]},"budget":5,"time":"latest","variables":[]})",
           "{" + box +
               R"(,"budget":5,"time":"latest","variables":[],"arrays":[{"name":"x","dtype":"u8","raw":0,"zbytes":0}]})",
           "{" + box + R"(,"budget":5,"time":"latest","variables":[],"lod":"fine"})",  // 1.10
           "{" + box + R"(,"budget":5,"time":"latest","variables":[],"lod":1})",
       }) {
    CAPTURE(j);
    CHECK(decode_error(make_frame(window_request, j)) == ErrorCode::malformed);
  }
  CHECK(decode_error(make_frame(hello, R"({"protocol":4294967296,"token":"","client":""})")) == ErrorCode::malformed);
  CHECK(decode_error(make_frame(error_reply, R"({"code":99,"message":"x"})")) == ErrorCode::malformed);
  CHECK(decode_error(make_frame(error_reply, R"({"code":0,"message":"x"})")) == ErrorCode::malformed);
  CHECK(decode_error(make_frame(error_reply, R"({"code":14,"message":"x"})")) == ErrorCode::malformed);
  CHECK(decode(make_frame(error_reply, R"({"code":13,"message":"x"})")).body.index() == 8);  // conflict, 1.1
  // Unknown fields are ignored (forward compatibility within version 1).
  CHECK_NOTHROW(decode(make_frame(error_reply, R"({"code":5,"message":"x","hint":"later"})")));
}

TEST_CASE("(1.10) a window's level-of-detail rule: sent and answered only when adaptive", "[collector]") {
  const auto round = [](const Body& b) { return decode(encode(Message{3, b})).body; };
  WindowRequest r{{0, 0, 0}, {1, 1, 1}, 10, "latest", {"u"}, ""};
  const auto uniform = encode(Message{3, r});
  CHECK(std::string(reinterpret_cast<const char*>(uniform.data()), uniform.size()).find("lod") == std::string::npos);
  CHECK(std::get<WindowRequest>(round(r)).lod == "uniform");  // absent (a 1.9 client): uniform
  r.lod = "adaptive";
  CHECK(std::get<WindowRequest>(round(r)).lod == "adaptive");
  WindowReply w = sample_window();
  CHECK(std::get<WindowReply>(round(w)).lod == "uniform");  // a 1.9 server's reply, or no details
  w.lod = "adaptive";
  CHECK(std::get<WindowReply>(round(w)).lod == "adaptive");
  const std::string box = R"("box":{"lo":[0,0,0],"hi":[1,1,1]})";
  try {
    (void)decode(make_frame(7, "{" + box + R"(,"budget":5,"time":"latest","variables":[],"lod":"fine"})"));
    FAIL("an unknown rule was accepted");
  } catch (const ProtocolError& e) {
    CHECK(std::string(e.what()).find(R"(window_request field "lod" is "fine", not "uniform" or "adaptive")") !=
          std::string::npos);
  }
}

TEST_CASE("(1.11) a window's ranges: sent only when known, NaN as null, only of its variables", "[collector]") {
  const auto round = [](const Body& b) { return std::get<WindowReply>(decode(encode(Message{3, b})).body); };
  WindowReply w = sample_window();
  REQUIRE(!w.variables.empty());
  const auto plain = encode(Message{3, w});
  CHECK(std::string(reinterpret_cast<const char*>(plain.data()), plain.size()).find("ranges") == std::string::npos);
  CHECK(round(w).ranges.empty());  // a 1.10 server's reply, a live state, a step without statistics
  const double nan = std::numeric_limits<double>::quiet_NaN();
  w.ranges.assign(w.variables.size(), {nan, nan});
  w.ranges.front() = {-0.25, 2.5};
  const auto back = round(w).ranges;
  REQUIRE(back.size() == w.variables.size());
  CHECK(back.front() == std::array<double, 2>{-0.25, 2.5});
  for (std::size_t v = 1; v < back.size(); ++v) CHECK((std::isnan(back[v][0]) && std::isnan(back[v][1])));
  w.ranges.pop_back();  // not one per variable: the encoder refuses
  CHECK_THROWS_AS(encode(Message{3, w}), ProtocolError);
  // On the wire: an object of [min, max] per variable; a variable it leaves out is NaN.
  const auto bytes = encode(Message{3, sample_window()});
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto at = text.find("\"variables\":");
  REQUIRE(at != std::string::npos);
  const std::string name = w.variables.front();
  const auto with = [&](const std::string& ranges) {
    std::string t = text;
    t.insert(at, "\"ranges\":" + ranges + ",");
    std::vector<std::byte> b(t.size());
    std::memcpy(b.data(), t.data(), t.size());
    const std::size_t more = t.size() - text.size();  // the header's payload length, the JSON's
    std::uint64_t payload = 0;
    std::uint32_t json = 0;
    std::memcpy(&payload, b.data() + 16, sizeof payload);
    std::memcpy(&json, b.data() + 24, sizeof json);
    payload += more;
    json += static_cast<std::uint32_t>(more);
    std::memcpy(b.data() + 16, &payload, sizeof payload);
    std::memcpy(b.data() + 24, &json, sizeof json);
    return b;
  };
  CHECK(std::get<WindowReply>(decode(with("{}")).body).ranges.size() == w.variables.size());
  for (const std::string& bad : std::vector<std::string>{"[]", "{\"nope\":[0,1]}", "{\"" + name + "\":[0]}",
                                                         "{\"" + name + "\":[0,\"1\"]}", "{\"" + name + "\":7}"}) {
    CAPTURE(bad);
    CHECK(decode_error(with(bad)) == ErrorCode::malformed);
  }
}

TEST_CASE("steering messages with a missing or mistyped field are malformed", "[collector][steer]") {
  struct Case {
    std::uint16_t type;
    std::string good;
    std::vector<std::string> bad;
  };
  const std::string status = R"("step":1,"time":0.5,"steps_per_second":2,"file":"f","parent":"","ranks":2,"clients":1)";
  const std::string param = R"("name":"physics.nu","unit":"m^2/s","min":0,"max":1,"description":"d")";
  const std::vector<Case> cases = {
      {12, R"({"state":"paused",)" + status + "}",
       {R"({"state":"sleeping",)" + status + "}", R"({"state":1,)" + status + "}", "{" + status + "}",
        R"({"state":"paused","step":1,"time":0.5,"steps_per_second":-2,"file":"f","parent":"","ranks":2,"clients":1})",
        R"({"state":"paused","step":1,"time":0.5,"steps_per_second":2,"file":"f","parent":"","ranks":-2,"clients":1})",
        R"({"state":"paused","step":1,"time":0.5,"steps_per_second":2,"file":"f","parent":null,"ranks":2,"clients":1})",
        R"({"state":"paused","step":1.5,"time":0.5,"steps_per_second":2,"file":"f","parent":"","ranks":2,"clients":1})",
        R"({"state":"paused","step":1,"time":0.5,"steps_per_second":2,"file":"f","parent":"","ranks":2})"}},
      {13, R"({"action":"pause"})", {R"({})", R"({"action":1})", R"({"action":["pause"]})"}},
      {14, R"({"state":"running","step":3,"time":0.1})",
       {R"({"state":"run","step":3,"time":0.1})", R"({"state":"running","step":"3","time":0.1})", R"({"state":"running","step":3})"}},
      {16, R"({"parameters":[{"type":"number","value":0.5,)" + param + R"(},{"type":"vector","value":[1,2,3],)" + param + "}]}",
       {R"({"parameters":{}})", R"({"parameters":[{"type":"number","value":[1,2,3],)" + param + "}]}",
        R"({"parameters":[{"type":"vector","value":0.5,)" + param + "}]}",
        R"({"parameters":[{"type":"vector","value":[1,2],)" + param + "}]}",
        R"({"parameters":[{"type":"string","value":0.5,)" + param + "}]}",
        R"({"parameters":[{"type":"number","value":"0.5",)" + param + "}]}",
        R"({"parameters":[{"type":"number","value":0.5,"name":"x","unit":"","min":2,"max":1,"description":""}]})",
        R"({"parameters":[{"type":"number","value":0.5,"name":"x","unit":"","min":0,"max":1}]})",
        R"({"parameters":[{"type":"number","value":0.5,"min_open":"yes",)" + param + "}]}"}},
      {17, R"({"values":{"physics.nu":0.01,"boundary.xmin.velocity":[1,0,0]}})",
       {R"({})", R"({"values":[]})", R"({"values":{"a":"1"}})", R"({"values":{"a":[1,2]}})", R"({"values":{"a":[1,2,3,4]}})",
        R"({"values":{"a":[1,"2",3]}})", R"({"values":{"a":null}})", R"({"values":{"a":true}})", R"({"values":{"a":{"x":1}}})"}},
      {18, R"({"step":4,"time":0.5,"values":{"a":1}})",
       {R"({"step":4,"time":0.5})", R"({"step":4,"time":"0.5","values":{}})", R"({"step":4,"time":0.5,"values":{"a":[]}})"}},
      {19, R"({"from":"latest","values":{},"file":"f","output":"o"})",
       {R"({"values":{}})", R"({"from":"latest"})", R"({"from":7,"values":{}})", R"({"from":"7","values":{},"file":3})",
        R"({"from":"7","values":{},"output":null})", R"({"from":"7","values":{"a":[0,0]}})"}},
      {20, R"({"file":"b","parent":"a","step":1,"time":0.5})",
       {R"({"file":"b","parent":"a","step":1})", R"({"file":"b","step":1,"time":0.5})", R"({"file":"b","parent":"a","step":-1.5,"time":0})"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type, c.good);
    CHECK_NOTHROW(decode(make_frame(c.type, c.good)));
    for (const auto& j : c.bad) {
      CAPTURE(j);
      CHECK(decode_error(make_frame(c.type, j)) == ErrorCode::malformed);
    }
  }
  // Requests without fields accept (and ignore) any object, but not a non-object.
  CHECK_NOTHROW(decode(make_frame(11, R"({"later":1})")));
  CHECK(decode_error(make_frame(15, "[]")) == ErrorCode::malformed);
}

namespace {
/// A window reply frame for 2 cells of one variable "p" with the given arrays part.
std::vector<std::byte> window_frame(const std::string& arrays, const std::vector<std::byte>& tail,
                                    const std::string& count = "[2,1,1]") {
  const std::string j = R"({"step":1,"time":0.5,"file":"f","level":0,"stride":1,"box":{"lo":[0,0,0],"hi":[1,1,1]},"cells":2,)"
                        R"("variables":["p"],"pieces":[{"row":0,"uid":1,"level":0,"first":[0,0,0],"count":)" +
                        count + R"(,"stride":1,"origin":[0,0,0],"spacing":[1,1,1]}],"arrays":)" + arrays + "}";
  return make_frame(8, j, tail);
}
std::string entry(const char* name, const char* dtype, std::size_t raw, std::size_t z) {
  return std::string(R"({"name":")") + name + R"(","dtype":")" + dtype + R"(","raw":)" + std::to_string(raw) +
         R"(,"zbytes":)" + std::to_string(z) + "}";
}
}  // namespace

TEST_CASE("compressed arrays whose sizes lie are refused", "[collector]") {
  const double p[2] = {1.5, 2.5};
  const std::uint8_t ct[2] = {1, 2};
  auto zp = zstd(p, sizeof p), zc = zstd(ct, sizeof ct);
  auto tail = zp;
  tail.insert(tail.end(), zc.begin(), zc.end());
  const auto arrays = [&](std::size_t raw_p, std::size_t z_p, std::size_t raw_c, std::size_t z_c) {
    // Appended, not "[" + ...: GCC 12 at -O3 warns falsely (-Wrestrict) on a literal + a temporary.
    std::string s = "[";
    s += entry("p", "f64", raw_p, z_p) + ",";
    s += entry("cell_type", "u8", raw_c, z_c) + "]";
    return s;
  };
  const auto ok = decode(window_frame(arrays(16, zp.size(), 2, zc.size()), tail));
  CHECK(std::get<WindowReply>(ok.body).values[0][1] == 2.5);

  CHECK(decode_error(window_frame(arrays(16, zp.size() + 1, 2, zc.size()), tail)) == ErrorCode::malformed);
  CHECK(decode_error(window_frame(arrays(16, zp.size() - 1, 2, zc.size()), tail)) == ErrorCode::malformed);
  CHECK(decode_error(window_frame(arrays(16, zp.size(), 2, zc.size() + 1000), tail)) == ErrorCode::malformed);
  CHECK(decode_error(window_frame(arrays(24, zp.size(), 2, zc.size()), tail)) == ErrorCode::malformed);  // raw lies
  CHECK(decode_error(window_frame(arrays(15, zp.size(), 2, zc.size()), tail)) == ErrorCode::malformed);  // not whole f64
  CHECK(decode_error(window_frame(arrays(16, zp.size(), 3, zc.size()), tail)) == ErrorCode::malformed);
  CHECK(decode_error(window_frame(arrays(16, zp.size(), 2, zc.size()), tail, "[3,1,1]")) == ErrorCode::malformed);
  CHECK(decode_error(window_frame(arrays(16, zp.size(), 2, zc.size()), tail, "[2,1,-1]")) == ErrorCode::malformed);
  CHECK(decode_error(window_frame("[" + entry("p", "f32", 16, zp.size()) + "]", zp)) == ErrorCode::malformed);
  CHECK(decode_error(window_frame("[" + entry("p", "f64", 16, zp.size()) + "]", zp)) == ErrorCode::malformed);
  // Garbage instead of a zstd frame.
  std::vector<std::byte> junk(zp.size(), std::byte{0x5a});
  junk.insert(junk.end(), zc.begin(), zc.end());
  CHECK(decode_error(window_frame(arrays(16, zp.size(), 2, zc.size()), junk)) == ErrorCode::malformed);
}

TEST_CASE("a zstd bomb cannot decompress beyond its declared size", "[collector]") {
  // 64 MiB of zeros compress to a few KiB; the JSON claims 16 bytes.
  std::vector<std::byte> zeros(std::size_t{64} << 20);
  const auto bomb = zstd(zeros.data(), zeros.size());
  REQUIRE(bomb.size() < (std::size_t{1} << 20));
  const std::uint8_t ct[2] = {1, 2};
  const auto zc = zstd(ct, 2);
  auto tail = bomb;
  tail.insert(tail.end(), zc.begin(), zc.end());
  const std::string arrays = "[" + entry("p", "f64", 16, bomb.size()) + "," + entry("cell_type", "u8", 2, zc.size()) + "]";
  CHECK(decode_error(window_frame(arrays, tail)) == ErrorCode::malformed);
  // A frame without a content-size field (streamed) is bounded by the output buffer.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::vector<std::byte> streamed(ZSTD_compressBound(zeros.size()));
  streamed.resize(ZSTD_compress2(cctx, streamed.data(), streamed.size(), zeros.data(), zeros.size()));
  ZSTD_freeCCtx(cctx);
  tail = streamed;
  tail.insert(tail.end(), zc.begin(), zc.end());
  const std::string a2 = "[" + entry("p", "f64", 16, streamed.size()) + "," + entry("cell_type", "u8", 2, zc.size()) + "]";
  CHECK(decode_error(window_frame(a2, tail)) == ErrorCode::malformed);
  // Declared sizes above the raw cap are refused before any allocation.
  const std::string huge = "[" + entry("p", "f64", std::size_t{1} << 40, zc.size()) + "," + entry("cell_type", "u8", 2, 0) + "]";
  CHECK(decode_error(window_frame(huge, zc)) == ErrorCode::too_large);
  CHECK(decode_error(window_frame(arrays, tail), Limits{kMaxReplyBytes, 8}) == ErrorCode::too_large);
}

namespace {
/// A payload handed out in chunks of at most `chunk` bytes, as a socket would.
class ChunkedSource final : public PayloadSource {
 public:
  ChunkedSource(std::span<const std::byte> frame, std::size_t chunk) : in_(frame.subspan(kHeaderSize)), chunk_(chunk) {}
  void read(std::byte* dst, std::size_t n) override {
    REQUIRE(n <= in_.size() - pos_);  // decode_payload never asks beyond the frame
    for (std::size_t done = 0; done < n;) {
      const std::size_t k = std::min(chunk_, n - done);
      std::memcpy(dst + done, in_.data() + pos_, k);
      pos_ += k;
      done += k;
    }
  }
  [[nodiscard]] std::size_t left() const { return in_.size() - pos_; }

 private:
  std::span<const std::byte> in_;
  std::size_t chunk_, pos_ = 0;
};

Message decode_chunked(std::span<const std::byte> frame, WindowReply* reuse = nullptr) {
  ChunkedSource source(frame, 7);
  auto m = decode_payload(read_header(frame, kMaxReplyBytes), source, kReplyLimits, reuse);
  CHECK(source.left() == 0);
  return m;
}
}  // namespace

TEST_CASE("a window reply round-trips in both codecs, through decode and decode_payload", "[collector][codec]") {
  const auto w = sample_window();
  const Message m{5, w};
  const auto none = encode(m, EncodeOptions{Codec::none});
  const auto zstd = encode(m, EncodeOptions{Codec::zstd});
  CHECK(zstd == encode(m));
  const std::string text(reinterpret_cast<const char*>(none.data()), none.size());
  CHECK(text.find(R"({"codec":"none","dtype":"f64","name":"p","raw":296,"zbytes":296})") != std::string::npos);
  // codec none: the frame ends with the arrays as they are.
  const auto tail = std::as_bytes(std::span(w.cell_type));
  CHECK(std::equal(tail.begin(), tail.end(), none.end() - static_cast<std::ptrdiff_t>(tail.size())));
  for (const auto& frame : {none, zstd}) {
    for (const auto& back : {decode(frame), decode_chunked(frame)}) {
      const auto& b = std::get<WindowReply>(back.body);
      CHECK(back.request_id == 5);
      CHECK(b.values == w.values);
      CHECK(b.cell_type == w.cell_type);
      CHECK(encode(back, EncodeOptions{Codec::none}) == none);
    }
  }
  // Into a previous reply's buffers: no new memory when the sizes match.
  auto reuse = w;
  const double* kept = reuse.values[1].data();
  const auto* kept_types = reuse.cell_type.data();
  reuse.values[1].assign(reuse.values[1].size(), 0.0);
  const auto back = std::get<WindowReply>(decode_chunked(none, &reuse).body);
  CHECK(back.values[1].data() == kept);
  CHECK(back.cell_type.data() == kept_types);
  CHECK(back.values == w.values);
  // Other messages through decode_payload too.
  for (const auto& b : every_body()) CHECK(encode(decode_chunked(encode(Message{3, b}))) == encode(Message{3, b}));
}

TEST_CASE("codec none: the frame's arrays point at the message's own values", "[collector][codec]") {
  const Message m{1, sample_window()};
  const auto& w = std::get<WindowReply>(m.body);
  FrameParts parts;
  encode(m, parts, EncodeOptions{Codec::none});
  REQUIRE(parts.arrays.size() == 3);
  CHECK(parts.arrays[0].data() == reinterpret_cast<const std::byte*>(w.values[0].data()));
  CHECK(parts.arrays[2].data() == reinterpret_cast<const std::byte*>(w.cell_type.data()));
  CHECK(parts.size() == encode(m, EncodeOptions{Codec::none}).size());
  CHECK(read_header(parts.head, kMaxReplyBytes).length == parts.size() - kHeaderSize);
  encode(m, parts, EncodeOptions{Codec::zstd});
  std::vector<std::byte> whole = parts.head;
  for (const auto& a : parts.arrays) whole.insert(whole.end(), a.begin(), a.end());
  CHECK(whole == encode(m));
  // The cap counts the arrays, wherever they are.
  CHECK_THROWS_AS(encode(m, parts, EncodeOptions{Codec::none, 500}), ProtocolError);
}

TEST_CASE("uncompressed arrays whose sizes lie, and unknown codecs, are refused", "[collector][codec]") {
  const double p[2] = {1.5, 2.5};
  const std::uint8_t ct[2] = {1, 2};
  std::vector<std::byte> tail(reinterpret_cast<const std::byte*>(p), reinterpret_cast<const std::byte*>(p) + 16);
  tail.insert(tail.end(), reinterpret_cast<const std::byte*>(ct), reinterpret_cast<const std::byte*>(ct) + 2);
  const auto raw = [](const char* name, const char* dtype, std::size_t r, std::size_t z, const char* codec = "\"none\"") {
    auto e = entry(name, dtype, r, z);
    return e.substr(0, e.size() - 1) + R"(,"codec":)" + codec + "}";
  };
  const auto arrays = [&](std::size_t raw_p, std::size_t z_p, std::size_t raw_c, std::size_t z_c) {
    std::string s = "[";  // appended: see the lambda of the same name above
    s += raw("p", "f64", raw_p, z_p) + ",";
    s += raw("cell_type", "u8", raw_c, z_c) + "]";
    return s;
  };
  const auto ok = std::get<WindowReply>(decode(window_frame(arrays(16, 16, 2, 2), tail)).body);
  CHECK((ok.values[0][1] == 2.5 && ok.cell_type[1] == 2));
  CHECK(decode_error(window_frame(arrays(16, 16, 2, 2), tail), Limits{kMaxReplyBytes, 8}) == ErrorCode::too_large);
  for (const auto& [a, why] : std::vector<std::pair<std::string, const char*>>{
           {arrays(16, 17, 2, 1), "zbytes != raw, total right"},
           {arrays(24, 16, 2, 2), "raw says more than sent"},
           {arrays(8, 8, 2, 2), "raw says fewer than the cells"},
           {arrays(16, 16, 1, 1), "one byte left over"},
           {arrays(16, 16, 3, 3), "one byte missing"},
           {arrays(15, 15, 2, 3), "not a whole f64"},
           {"[" + raw("p", "f64", 16, 16, "\"lz4\"") + "," + raw("cell_type", "u8", 2, 2) + "]", "unknown codec"},
           {"[" + raw("p", "f64", 16, 16, "0") + "," + raw("cell_type", "u8", 2, 2) + "]", "codec not a string"},
           {"[" + raw("p", "f64", 16, 16, "\"zstd\"") + "," + raw("cell_type", "u8", 2, 2) + "]", "zstd, but raw bytes"},
       }) {
    CAPTURE(why);
    CHECK(decode_error(window_frame(a, tail)) == ErrorCode::malformed);
  }
  // A frame may mix codecs: each array says its own (absent: zstd, as a 1.1 server).
  const auto zc = zstd(ct, 2);
  std::vector<std::byte> mixed(tail.begin(), tail.begin() + 16);
  mixed.insert(mixed.end(), zc.begin(), zc.end());
  const auto mixed_arrays = "[" + raw("p", "f64", 16, 16) + "," + entry("cell_type", "u8", 2, zc.size()) + "]";
  const auto m = std::get<WindowReply>(decode(window_frame(mixed_arrays, mixed)).body);
  CHECK(m.cell_type[1] == 2);
}

TEST_CASE("the hello negotiates the codec", "[collector][codec]") {
  CHECK(choose_codec({}) == Codec::zstd);  // a 1.1 client
  CHECK(choose_codec({"none", "zstd"}) == Codec::none);
  CHECK(choose_codec({"zstd", "none"}) == Codec::zstd);
  CHECK(choose_codec({"lz4", "none"}) == Codec::none);  // unknown offers are skipped
  CHECK(!choose_codec({"lz4"}).has_value());
  const auto reply = [](std::vector<std::string> codecs) {
    return answer_hello(Hello{1, "", "c", std::move(codecs)}, "", "s", {});
  };
  CHECK(std::get<HelloReply>(reply({})).codec == Codec::zstd);
  CHECK(std::get<HelloReply>(reply({"none"})).codec == Codec::none);
  CHECK(std::get<ErrorReply>(reply({"lz4", "gzip"})).code == ErrorCode::bad_argument);
  // On the wire: codecs only when offered; the reply always names its codec.
  CHECK(json_text(Hello{1, "", "c", {}}).find("codecs") == std::string::npos);
  CHECK(json_text(Hello{1, "", "c", {"none", "zstd"}}).find(R"("codecs":["none","zstd"])") != std::string::npos);
  const auto back = std::get<Hello>(decode(encode(Message{1, Hello{1, "", "c", {"none", "x"}}})).body);
  CHECK(back.codecs == std::vector<std::string>{"none", "x"});
  CHECK(std::get<HelloReply>(decode(encode(Message{1, HelloReply{"s", 1, {}, Codec::none}})).body).codec == Codec::none);
  CHECK(std::get<HelloReply>(decode(make_frame(2, R"({"server":"s","protocol":1,"capabilities":[]})")).body).codec ==
        Codec::zstd);  // a 1.1 server
  CHECK(decode_error(make_frame(2, R"({"server":"s","protocol":1,"capabilities":[],"codec":"lz4"})")) == ErrorCode::malformed);
  CHECK(decode_error(make_frame(2, R"({"server":"s","protocol":1,"capabilities":[],"codec":1})")) == ErrorCode::malformed);
  CHECK(decode_error(make_frame(1, R"({"protocol":1,"token":"","client":"c","codecs":"none"})")) == ErrorCode::malformed);
}

namespace {
/// The JSON's "arrays" entries of a frame: (name, codec, zbytes).
std::vector<std::tuple<std::string, std::string, std::uint64_t>> array_entries(const std::vector<std::byte>& frame) {
  const auto* p = reinterpret_cast<const unsigned char*>(frame.data()) + kHeaderSize;
  const std::uint32_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (std::uint32_t{p[3]} << 24);
  const auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(p + 4), n));
  std::vector<std::tuple<std::string, std::string, std::uint64_t>> out;
  for (const auto& a : j.at("arrays")) out.emplace_back(a.at("name"), a.at("codec"), a.at("zbytes"));
  return out;
}
}  // namespace

TEST_CASE("zstd for a client that reads none too: arrays zstd would not shrink go as they are (1.6)",
          "[collector][codec]") {
  // 100 000 cells: "noise" is random float64 (zstd cannot shrink it), "calm" a field at
  // rest (one value), the cell types mostly fluid: the oracle is the data's own nature.
  const std::size_t cells = 100000;
  WindowReply w = sample_window();
  w.pieces.resize(1);
  w.pieces[0].first = {0, 0, 0};
  w.pieces[0].count = {100, 100, 10};
  w.pieces[0].stride = 1;
  w.cells = cells;
  w.variables = {"noise", "calm"};
  w.values.assign(2, ValueArray(cells));
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& x : w.values[0]) x = u(rng);
  std::fill(w.values[1].begin(), w.values[1].end(), 0.25);
  w.cell_type.assign(cells, 0);
  for (std::size_t i = 0; i < cells; i += 97) w.cell_type[i] = 2;
  const Message m{9, w};

  const auto mixed = encode(m, EncodeOptions{Codec::zstd, kMaxReplyBytes, kZstdLevel, true});
  const auto entries = array_entries(mixed);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0] == std::tuple<std::string, std::string, std::uint64_t>{"noise", "none", cells * 8});
  CHECK(std::get<1>(entries[1]) == "zstd");
  CHECK(std::get<2>(entries[1]) < cells * 8 / 100);
  CHECK(std::get<1>(entries[2]) == "zstd");
  // Every value as it was, whatever each array's codec.
  const auto back = std::get<WindowReply>(decode(mixed).body);
  CHECK(back.values == w.values);
  CHECK(back.cell_type == w.cell_type);

  // A client that reads only zstd (1.1, or one that insists) gets every array in zstd.
  for (const auto& e : array_entries(encode(m, EncodeOptions{Codec::zstd}))) CHECK(std::get<1>(e) == "zstd");
  // Small arrays are judged by their compressed size, too.
  WindowReply small = w;
  small.cells = 2000;
  small.pieces[0].count = {20, 10, 10};
  for (auto& v : small.values) v.resize(2000);
  small.cell_type.resize(2000);
  const auto e2 =
      array_entries(encode(Message{3, small}, EncodeOptions{Codec::zstd, kMaxReplyBytes, kZstdLevel, true}));
  CHECK(std::get<1>(e2[0]) == "none");
  CHECK(std::get<1>(e2[1]) == "zstd");
}

namespace {
/// Field `T` at byte `at` of piece `i` of a frame's piece table, read at the offsets
/// the protocol document gives (not through the decoder).
template <typename T>
T table_field(std::span<const std::byte> table, std::size_t i, std::size_t at) {
  T v;
  std::memcpy(&v, table.data() + i * 96 + at, sizeof v);
  return v;
}
}  // namespace

TEST_CASE("(1.7) a window reply's pieces as a binary table: the documented layout, both codecs, both forms",
          "[collector][codec]") {
  auto w = sample_window();
  w.pieces[0].uid = std::numeric_limits<std::uint64_t>::max();
  w.pieces[0].row = -1;
  w.pieces[1].origin = {1.0 / 3.0, -0.0, 1e300};
  const Message m{4, w};
  EncodeOptions table;
  table.codec = Codec::none;
  table.piece_table = true;
  const auto frame = encode(m, table);
  // The JSON lists the table as the first array and has no "pieces" list.
  const auto entries = array_entries(frame);
  REQUIRE(entries.size() == w.variables.size() + 2);
  CHECK(std::get<0>(entries[0]) == "pieces");
  CHECK(std::get<2>(entries[0]) == 96 * w.pieces.size());
  const auto* p = reinterpret_cast<const unsigned char*>(frame.data()) + kHeaderSize;
  const std::uint32_t n = p[0] | (p[1] << 8) | (p[2] << 16) | (std::uint32_t{p[3]} << 24);
  const auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(p + 4), n));
  CHECK(!j.contains("pieces"));
  CHECK(j.at("arrays")[0].at("dtype") == "piece");
  // The table's bytes, right after the JSON, at the documented offsets.
  const auto bytes = std::span<const std::byte>(frame).subspan(kHeaderSize + 4 + n, 96 * w.pieces.size());
  for (std::size_t i = 0; i < w.pieces.size(); ++i) {
    const auto& q = w.pieces[i];
    CAPTURE(i);
    CHECK(table_field<std::int64_t>(bytes, i, 0) == q.row);
    CHECK(table_field<std::uint64_t>(bytes, i, 8) == q.uid);
    CHECK(table_field<std::int32_t>(bytes, i, 16) == q.level);
    CHECK(table_field<std::int32_t>(bytes, i, 20) == q.stride);
    for (std::size_t a = 0; a < 3; ++a) {
      CHECK(table_field<std::int32_t>(bytes, i, 24 + 4 * a) == q.first[a]);
      CHECK(table_field<std::int32_t>(bytes, i, 36 + 4 * a) == q.count[a]);
      CHECK(table_field<double>(bytes, i, 48 + 8 * a) == q.origin[a]);
      CHECK(table_field<double>(bytes, i, 72 + 8 * a) == q.spacing[a]);
    }
  }
  CHECK(std::signbit(table_field<double>(bytes, 1, 56)));
  // Decoded (whole, and as a socket reads it), the same reply as the JSON form gives.
  const auto listed = std::get<WindowReply>(decode(encode(m, EncodeOptions{Codec::none})).body);
  table.codec = Codec::zstd;
  for (const auto& f : {frame, encode(m, table)}) {
    for (const auto& back : {decode(f), decode_chunked(f)}) {
      const auto& b = std::get<WindowReply>(back.body);
      REQUIRE(b.pieces.size() == listed.pieces.size());
      for (std::size_t i = 0; i < b.pieces.size(); ++i) {
        CHECK(b.pieces[i].row == listed.pieces[i].row);
        CHECK(b.pieces[i].uid == listed.pieces[i].uid);
        CHECK((b.pieces[i].level == listed.pieces[i].level && b.pieces[i].stride == listed.pieces[i].stride));
        CHECK((b.pieces[i].first == listed.pieces[i].first && b.pieces[i].count == listed.pieces[i].count));
        CHECK((b.pieces[i].origin == listed.pieces[i].origin && b.pieces[i].spacing == listed.pieces[i].spacing));
      }
      CHECK(b.values == w.values);
      CHECK(b.cell_type == w.cell_type);
      CHECK(encode(back, EncodeOptions{Codec::none}) == encode(m, EncodeOptions{Codec::none}));
    }
  }
  // Codec none: the table is in the head (bytes of the encoder), the values still the
  // message's own.
  FrameParts parts;
  table.codec = Codec::none;
  encode(m, parts, table);
  REQUIRE(parts.arrays.size() == 3);
  CHECK(parts.arrays[0].data() == reinterpret_cast<const std::byte*>(std::get<WindowReply>(m.body).values[0].data()));
  // Reusing a previous reply's buffers: the table never takes the cell types' buffer.
  auto reuse = w;
  const auto* kept_types = reuse.cell_type.data();
  const auto back = std::get<WindowReply>(decode_chunked(frame, &reuse).body);
  CHECK(back.cell_type.data() == kept_types);
  CHECK(back.cell_type == w.cell_type);
}

TEST_CASE("(1.7) piece tables that lie are refused", "[collector][codec]") {
  // One piece of 2 cells, one variable p, no cell types, as raw arrays.
  std::vector<std::byte> table(96);
  const auto put = [&](std::size_t at, auto v) { std::memcpy(table.data() + at, &v, sizeof v); };
  const auto frame = [&](const std::string& extra_json = "", std::size_t table_raw = 96) {
    const double p[2] = {1.5, 2.5};
    std::vector<std::byte> tail(table.begin(), table.end());
    tail.insert(tail.end(), reinterpret_cast<const std::byte*>(p), reinterpret_cast<const std::byte*>(p) + 16);
    const std::string arrays = R"([{"name":"pieces","dtype":"piece","raw":)" + std::to_string(table_raw) +
                               R"(,"zbytes":)" + std::to_string(table.size()) + R"(,"codec":"none"},)" +
                               R"({"name":"p","dtype":"f64","raw":16,"zbytes":16,"codec":"none"},)" +
                               R"({"name":"cell_type","dtype":"u8","raw":0,"zbytes":0,"codec":"none"}])";
    return make_frame(8,
                      R"({"step":1,"time":0.5,"file":"f.h5","level":0,"stride":1,"box":{"lo":[0,0,0],"hi":[1,1,1]},)"
                      R"("cells":2,"variables":["p"],)" +
                          extra_json + R"("arrays":)" + arrays + "}",
                      tail);
  };
  const auto good = [&] {
    table.assign(96, std::byte{0});
    put(0, std::int64_t{3});
    put(8, std::uint64_t{77});
    put(20, std::int32_t{1});
    put(36, std::int32_t{2});
    put(40, std::int32_t{1});
    put(44, std::int32_t{1});
    put(72, 0.5);
  };
  good();
  const auto ok = std::get<WindowReply>(decode(frame()).body);
  REQUIRE(ok.pieces.size() == 1);
  CHECK(
      (ok.pieces[0].row == 3 && ok.pieces[0].uid == 77 && ok.pieces[0].count == std::array<std::int32_t, 3>{2, 1, 1}));
  CHECK(ok.values[0][1] == 2.5);
  CHECK(decode_error(frame(R"("pieces":[],)")) == ErrorCode::malformed);  // both forms
  table.resize(95);
  CHECK(decode_error(frame("", 95)) == ErrorCode::malformed);  // not whole pieces
  good();
  put(36, std::int32_t{3});
  CHECK(decode_error(frame()) == ErrorCode::malformed);  // cells != the pieces' cells
  good();
  put(40, std::int32_t{-1});
  CHECK(decode_error(frame()) == ErrorCode::malformed);  // negative count
  good();
  put(20, std::int32_t{0});
  CHECK(decode_error(frame()) == ErrorCode::malformed);  // stride 0
  good();
  put(16, std::int32_t{-2});
  CHECK(decode_error(frame()) == ErrorCode::malformed);  // negative level
  good();
  put(48, std::numeric_limits<double>::quiet_NaN());
  CHECK(decode_error(frame()) == ErrorCode::malformed);  // a corner JSON could not carry
  // A table that is not the first array.
  good();
  const double p[2] = {1.5, 2.5};
  std::vector<std::byte> tail(reinterpret_cast<const std::byte*>(p), reinterpret_cast<const std::byte*>(p) + 16);
  tail.insert(tail.end(), table.begin(), table.end());
  CHECK(
      decode_error(make_frame(
          8,
          R"({"step":1,"time":0.5,"file":"f.h5","level":0,"stride":1,"box":{"lo":[0,0,0],"hi":[1,1,1]},)"
          R"("cells":2,"variables":["p"],"pieces":[{"row":3,"uid":77,"level":0,"first":[0,0,0],"count":[2,1,1],"stride":1,"origin":[0,0,0],"spacing":[0.5,0,0]}],)"
          R"("arrays":[{"name":"p","dtype":"f64","raw":16,"zbytes":16,"codec":"none"},)"
          R"({"name":"pieces","dtype":"piece","raw":96,"zbytes":96,"codec":"none"}]})",
          tail)) == ErrorCode::malformed);
}

TEST_CASE("(1.7) the hello asks for piece tables; a 1.6 peer sends and gets none", "[collector][codec]") {
  Hello h{1, "", "c", {"none"}};
  CHECK(json_text(h).find("piece_table") == std::string::npos);  // a 1.6 hello, as before
  CHECK(!std::get<HelloReply>(answer_hello(h, "", "s", {})).piece_table);
  h.piece_table = true;
  CHECK(json_text(h).find(R"("piece_table":true)") != std::string::npos);
  CHECK(std::get<Hello>(decode(encode(Message{1, h})).body).piece_table);
  const auto reply = std::get<HelloReply>(answer_hello(h, "", "s", {}));
  CHECK(reply.piece_table);
  CHECK(std::get<HelloReply>(decode(encode(Message{1, reply})).body).piece_table);
  CHECK(!std::get<HelloReply>(
             decode(make_frame(2, R"({"server":"s","protocol":1,"capabilities":[],"codec":"none"})")).body)
             .piece_table);  // a 1.6 server
  CHECK(decode_error(make_frame(1, R"({"protocol":1,"token":"","client":"c","piece_table":"yes"})")) ==
        ErrorCode::malformed);
}

TEST_CASE("(1.7) every truncation of a window reply with a piece table is refused", "[collector][codec]") {
  for (const Codec codec : {Codec::none, Codec::zstd}) {
    EncodeOptions table;
    table.codec = codec;
    table.piece_table = true;
    const auto bytes = encode(Message{1, sample_window()}, table);
    CAPTURE(to_string(codec));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      CAPTURE(n);
      CHECK(decode_error(std::span(bytes).first(n)) == ErrorCode::malformed);
    }
  }
}
