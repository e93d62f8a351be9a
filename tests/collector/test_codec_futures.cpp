// The collector codec's revision 1.8 (docs/collector-protocol.md, "Futures"): every new
// field survives a round trip; a 1.7 peer's frames, without them, decode to their
// defaults, and frames without futures encode as a 1.7 peer wrote them; a mistyped new
// field is malformed, a value the decoder would refuse is refused by encode.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "frame_util.hpp"

using namespace rwd::collector;
using rwd::collector::test::make_frame;

namespace {

Body round_trip(const Body& b) { return decode(encode(Message{3, b})).body; }

bool malformed(std::uint16_t type, const std::string& json) {
  try {
    (void)decode(make_frame(type, json));
  } catch (const ProtocolError& e) {
    return e.code() == ErrorCode::malformed;
  }
  return false;
}

const ParamValues kValues{{"physics.nu", 0.002}, {"boundary.xmin.velocity", std::array<double, 3>{1.2, 0, -0.5}}};

}  // namespace

TEST_CASE("(1.8) every futures field survives a round trip", "[collector][steer][futures]") {
  RunStatus st{RunState::paused, 40, 0.4, 3.5, "a.h5", "p.h5", 4, 2};
  st.futures = {{"a.h5", "p.h5", RunState::paused, 40, 0.4, 0.0, {"boundary.xmin.velocity=[1.2, 0, 0]"}},
                {"b.h5", "p.h5", RunState::finished, 38, 0.38, 0.0, {}},
                {"c.h5", "a.h5", RunState::running, -2, 1e-300, 12.25, {"physics.nu=0.002", "output.checkpoint_every=3"}}};
  const auto s = std::get<StatusReply>(round_trip(StatusReply{st})).status;
  REQUIRE(s.futures.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const auto &a = s.futures[i], &b = st.futures[i];
    CHECK((a.file == b.file && a.parent == b.parent && a.state == b.state && a.step == b.step));
    CHECK((a.time == b.time && a.steps_per_second == b.steps_per_second && a.changes == b.changes));
  }
  CHECK((s.file == "a.h5" && s.step == 40 && s.ranks == 4));  // the job's own fields stay

  const auto c = std::get<ControlRequest>(round_trip(ControlRequest{"pause", "b.h5"}));
  CHECK((c.action == "pause" && c.file == "b.h5"));
  const auto set = std::get<SetRequest>(round_trip(SetRequest{kValues, "a1.h5"}));
  CHECK((set.values == kValues && set.file == "a1.h5"));

  const BranchRequest fork{"latest", "a.h5", {}, "", {{kValues, "a1.h5"}, {{}, ""}, {{{"physics.nu", 0.004}}, "/tmp/a3.h5"}}};
  const auto b = std::get<BranchRequest>(round_trip(fork));
  CHECK((b.from == "latest" && b.file == "a.h5" && b.values.empty() && b.output.empty()));
  REQUIRE(b.futures.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK((b.futures[i].values == fork.futures[i].values && b.futures[i].output == fork.futures[i].output));
  }
  const auto r = std::get<BranchReply>(round_trip(BranchReply{"a1.h5", "a.h5", 44, 0.44, {"a1.h5", "a.branch44.h5", "/tmp/a3.h5"}}));
  CHECK((r.file == "a1.h5" && r.parent == "a.h5" && r.step == 44 && r.time == 0.44));
  CHECK(r.files == std::vector<std::string>{"a1.h5", "a.branch44.h5", "/tmp/a3.h5"});
}

TEST_CASE("(1.8) a 1.7 peer's frames decode to the defaults; without futures nothing new is written",
          "[collector][steer][futures]") {
  const std::string status = R"({"state":"running","step":1,"time":0.5,"steps_per_second":2.5,"file":"f","parent":"","ranks":2,"clients":1})";
  CHECK(std::get<StatusReply>(decode(make_frame(12, status)).body).status.futures.empty());
  CHECK(std::get<ControlRequest>(decode(make_frame(13, R"({"action":"stop"})")).body).file.empty());
  CHECK(std::get<SetRequest>(decode(make_frame(17, R"({"values":{"a":1}})")).body).file.empty());
  CHECK(std::get<BranchRequest>(decode(make_frame(19, R"({"from":"latest","values":{"a":1}})")).body).futures.empty());
  CHECK(std::get<BranchReply>(decode(make_frame(20, R"({"file":"b","parent":"a","step":1,"time":0.5})")).body).files.empty());
  // A future without an output: the server names it.
  const auto f = std::get<BranchRequest>(decode(make_frame(19, R"({"from":"latest","values":{},"futures":[{"values":{}}]})")).body);
  REQUIRE(f.futures.size() == 1);
  CHECK((f.futures[0].values.empty() && f.futures[0].output.empty()));

  // What a 1.8 peer writes when it has nothing of 1.8 to say: a 1.7 frame, byte for byte.
  CHECK(json_text(StatusReply{{RunState::running, 1, 0.5, 2.5, "f", "", 2, 1}}) == nlohmann::json::parse(status).dump());
  CHECK(json_text(ControlRequest{"stop"}) == R"({"action":"stop"})");
  CHECK(json_text(SetRequest{{{"a", 1.0}}}) == R"({"values":{"a":1.0}})");
  CHECK(json_text(BranchRequest{"latest", "", {{"a", 1.0}}, ""}) == R"({"from":"latest","values":{"a":1.0}})");
  CHECK(json_text(BranchReply{"b", "a", 1, 0.5}) == R"({"file":"b","parent":"a","step":1,"time":0.5})");
}

TEST_CASE("(1.8) mistyped futures fields are malformed", "[collector][steer][futures]") {
  const std::string status = R"("state":"running","step":1,"time":0.5,"steps_per_second":2,"file":"f","parent":"","ranks":2,"clients":1)";
  const std::string future = R"("file":"a.h5","parent":"f","state":"paused","step":1,"time":0.5,"steps_per_second":0)";
  CHECK_NOTHROW(decode(make_frame(12, "{" + status + R"(,"futures":[{)" + future + R"(,"changes":["x=1"]}]})")));
  for (const std::string& bad : std::vector<std::string>{R"("futures":{})", R"("futures":[1])", R"("futures":[{)" + future + "}]",
                                R"("futures":[{)" + future + R"(,"changes":"x=1"}])",
                                R"("futures":[{)" + future + R"(,"changes":[1]}])",
                                R"("futures":[{"file":"a","parent":"","state":"asleep","step":1,"time":0,"steps_per_second":0,"changes":[]}])",
                                R"("futures":[{"file":"a","parent":"","state":"paused","step":1,"time":0,"steps_per_second":-1,"changes":[]}])",
                                R"("futures":[{"file":"a","parent":"","state":"paused","step":0.5,"time":0,"steps_per_second":0,"changes":[]}])",
                                R"("futures":[{"parent":"","state":"paused","step":1,"time":0,"steps_per_second":0,"changes":[]}])"}) {
    CAPTURE(bad);
    CHECK(malformed(12, "{" + status + "," + bad + "}"));
  }
  CHECK(malformed(13, R"({"action":"pause","file":1})"));
  CHECK(malformed(13, R"({"action":"pause","file":null})"));
  CHECK(malformed(17, R"({"values":{"a":1},"file":["a.h5"]})"));
  for (const std::string& bad : std::vector<std::string>{R"("futures":{})", R"("futures":[{}])", R"("futures":[{"values":[]}])",
                                R"("futures":[{"values":{"a":"1"}}])", R"("futures":[{"values":{},"output":7}])",
                                R"("futures":[{"values":{},"output":null}])", R"("futures":["a.h5"])"}) {
    CAPTURE(bad);
    CHECK(malformed(19, R"({"from":"latest","values":{},)" + bad + "}"));
  }
  CHECK(malformed(20, R"({"file":"b","parent":"a","step":1,"time":0.5,"files":"b"})"));
  CHECK(malformed(20, R"({"file":"b","parent":"a","step":1,"time":0.5,"files":[1]})"));
}

TEST_CASE("(1.8) encode refuses a future's status the decoder would refuse", "[collector][steer][futures]") {
  const auto refused = [](double steps_per_second, double time) {
    RunStatus st{RunState::running, 1, 0.1, 1.0, "a.h5", "", 1, 0};
    st.futures = {{"a.h5", "", RunState::running, 1, time, steps_per_second, {}}};
    try {
      (void)encode(Message{1, StatusReply{st}});
    } catch (const ProtocolError& e) {
      return e.code() == ErrorCode::bad_argument;
    }
    return false;
  };
  CHECK_FALSE(refused(0.0, 0.1));
  CHECK(refused(-1.0, 0.1));
  CHECK(refused(std::nan(""), 0.1));
  CHECK(refused(INFINITY, 0.1));
  CHECK(refused(1.0, std::nan("")));
}

TEST_CASE("(1.12) a future's compute ranks: sent when said, absent as not said, 0 ranks malformed",
          "[collector][steer][futures]") {
  RunStatus st{RunState::running, 9, 0.9, 1.0, "a.h5", "p.h5", 4, 1};
  st.futures = {{"a.h5", "p.h5", RunState::running, 9, 0.9, 1.0, {}, 0, 3},
                {"b.h5", "p.h5", RunState::paused, 9, 0.9, 0.0, {}, 3, 1},
                {"c.h5", "p.h5", RunState::running, 9, 0.9, 0.0, {}, 0, 0}};
  const auto s = std::get<StatusReply>(round_trip(StatusReply{st})).status;
  REQUIRE(s.futures.size() == 3);
  CHECK((s.futures[0].first_rank == 0 && s.futures[0].ranks == 3));
  CHECK((s.futures[1].first_rank == 3 && s.futures[1].ranks == 1));
  CHECK((s.futures[2].first_rank == 0 && s.futures[2].ranks == 0));  // not said: not sent
  CHECK(json_text(StatusReply{st}).find(R"("changes":[],"file":"c.h5")") != std::string::npos);
  const std::string status =
      R"("state":"running","step":1,"time":0.5,"steps_per_second":2,"file":"f","parent":"","ranks":2,"clients":1)";
  const std::string future =
      R"("file":"a.h5","parent":"f","state":"paused","step":1,"time":0.5,"steps_per_second":0,"changes":[])";
  CHECK_NOTHROW(decode(make_frame(12, "{" + status + R"(,"futures":[{)" + future + R"(,"first_rank":1,"ranks":1}]})")));
  for (const std::string& bad :
       std::vector<std::string>{R"("first_rank":0,"ranks":0)", R"("ranks":1)", R"("first_rank":-1,"ranks":1)",
                                R"("first_rank":0,"ranks":"2")"}) {
    CAPTURE(bad);
    std::string frame = "{" + status;
    frame += R"(,"futures":[{)";
    frame += future;
    frame += ",";
    frame += bad;
    frame += "}]}";
    CHECK(malformed(12, frame));
  }
}
