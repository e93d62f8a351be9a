// The collector's request handler: field validation, hello/token, service errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "frame_util.hpp"

using namespace rwd::collector;

namespace {
WindowRequest good_request() { return {{0, 0, 0}, {1, 1, 1}, 100, "latest", {"p"}, ""}; }

ErrorCode error_of(const Body& b) {
  const auto* e = std::get_if<ErrorReply>(&b);
  REQUIRE(e != nullptr);
  return e->code;
}
}  // namespace

TEST_CASE("time selectors follow Reader::find_step plus live", "[collector]") {
  for (const char* s : {"live", "latest", "0", "42", "#0", "#3", "#-1", "t=0.5", "t=1e-3", "t=-2"}) {
    CAPTURE(s);
    CHECK(valid_time_selector(s));
  }
  for (const char* s : {"", "Live", "-1", "4x", "#", "#-", "#a", "t=", "t=x", "t=nan", "t=inf", "t=0.5s", " 1",
                        "1234567890123456789012"}) {
    CAPTURE(s);
    CHECK_FALSE(valid_time_selector(s));
  }
}

TEST_CASE("window requests with bad fields are refused before the service sees them", "[collector]") {
  const HandlerLimits limits;
  CHECK_FALSE(Handler::validate(good_request(), limits).has_value());
  auto r = good_request();
  r.lo[1] = std::nan("");
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
  r = good_request();
  r.hi[2] = std::numeric_limits<double>::infinity();
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
  r = good_request();
  r.lo[0] = 2;
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
  r = good_request();
  r.lo = r.hi;  // a flat box is a valid slice
  CHECK_FALSE(Handler::validate(r, limits).has_value());
  r = good_request();
  r.budget = 0;
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
  r.budget = limits.max_budget + 1;
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
  r = good_request();
  r.time = "yesterday";
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
  r = good_request();
  r.variables.assign(limits.max_variables + 1, "p");
  CHECK(Handler::validate(r, limits)->code == ErrorCode::bad_argument);
}

TEST_CASE("the handler answers requests and turns service failures into error replies", "[collector]") {
  test::FakeService service;
  Handler h(service);
  CHECK(std::get<InfoReply>(h.handle(InfoRequest{})).info.variables.size() == 3);
  CHECK(std::get<StepsReply>(h.handle(StepsRequest{})).steps.size() == 3);
  const auto w = std::get<WindowReply>(h.handle(good_request()));
  CHECK(w.cells == 100);
  CHECK(w.values.at(0).at(99) == test::fake_value(0, 99, 100));

  auto r = good_request();
  r.variables = {"p", "rho"};
  CHECK(error_of(h.handle(r)) == ErrorCode::unknown_variable);
  r = good_request();
  r.file = "other.h5";
  CHECK(error_of(h.handle(r)) == ErrorCode::bad_argument);
  r.file = "fake.h5";
  CHECK(std::holds_alternative<WindowReply>(h.handle(r)));
  r = good_request();
  r.time = "99";
  CHECK(error_of(h.handle(r)) == ErrorCode::no_such_step);
  r.time = "#7";
  const auto internal = std::get<ErrorReply>(h.handle(r));
  CHECK(internal.code == ErrorCode::internal);
  CHECK(internal.message == "disk on fire");
  CHECK(error_of(h.handle(Hello{})) == ErrorCode::unknown_type);
  CHECK(error_of(h.handle(ErrorReply{})) == ErrorCode::unknown_type);
}

TEST_CASE("a file is named as served or by its unique basename; else the served files are listed", "[collector]") {
  // Serves out/demo/fast.h5, out/other/fast.h5 and out/other/slow.h5; records which file
  // each window reached.
  class Files : public test::FakeService {
   public:
    std::vector<std::string> asked;
    ServerInfo info() override {
      ServerInfo i = FakeService::info();
      i.files = {"out/demo/fast.h5", "out/other/fast.h5", "out/other/slow.h5"};
      return i;
    }
    WindowReply window(const WindowRequest& r) override {
      asked.push_back(r.file);
      return FakeService::window(r);
    }
  } service;
  Handler h(service);
  auto r = good_request();
  for (const char* name : {"out/other/slow.h5", "slow.h5", "./slow.h5", "elsewhere/slow.h5"}) {
    CAPTURE(name);
    r.file = name;
    CHECK(std::holds_alternative<WindowReply>(h.handle(r)));
  }
  CHECK(service.asked == std::vector<std::string>(4, "out/other/slow.h5"));
  r.file = "nope.h5";
  const auto none = std::get<ErrorReply>(h.handle(r));
  CHECK(none.code == ErrorCode::bad_argument);
  CHECK(none.message ==
        "no file \"nope.h5\" on this server (served: out/demo/fast.h5, out/other/fast.h5, out/other/slow.h5)");
  r.file = "fast.h5";
  const auto two = std::get<ErrorReply>(h.handle(r));
  CHECK(two.code == ErrorCode::bad_argument);
  CHECK(two.message ==
        "\"fast.h5\" names more than one served file (out/demo/fast.h5, out/other/fast.h5): give its "
        "path as served");
  CHECK(service.asked.size() == 4);  // neither reached the service
}

TEST_CASE("hello: version and token", "[collector]") {
  const std::vector<std::string> caps{"window"};
  CHECK(std::holds_alternative<HelloReply>(answer_hello(Hello{1, "", "c", {}}, "", "s", caps)));
  CHECK(std::holds_alternative<HelloReply>(answer_hello(Hello{1, "anything", "c", {}}, "", "s", caps)));
  CHECK(std::holds_alternative<HelloReply>(answer_hello(Hello{1, "s3cret", "c", {}}, "s3cret", "s", caps)));
  CHECK(error_of(answer_hello(Hello{1, "s3cre", "c", {}}, "s3cret", "s", caps)) == ErrorCode::unauthorized);
  CHECK(error_of(answer_hello(Hello{1, "", "c", {}}, "s3cret", "s", caps)) == ErrorCode::unauthorized);
  CHECK(error_of(answer_hello(Hello{2, "s3cret", "c", {}}, "s3cret", "s", caps)) == ErrorCode::bad_version);
  CHECK(same_token("abc", "abc"));
  CHECK_FALSE(same_token("abc", "abd"));
  CHECK_FALSE(same_token("abc", std::string("abc\0", 4)));
  CHECK_FALSE(same_token("", "a"));
}

TEST_CASE("steering requests with bad fields are refused before the service sees them", "[collector][steer]") {
  const HandlerLimits limits;
  CHECK_FALSE(Handler::validate(ControlRequest{"pause"}).has_value());
  for (const char* a : {"", "Pause", "halt", "pause "}) {
    CAPTURE(a);
    CHECK(Handler::validate(ControlRequest{a})->code == ErrorCode::bad_argument);
  }
  const ParamValues one{{"physics.nu", 0.1}};
  CHECK_FALSE(Handler::validate(one, limits).has_value());
  CHECK(Handler::validate(ParamValues{}, limits)->code == ErrorCode::bad_argument);
  CHECK_FALSE(Handler::validate(ParamValues{}, limits, true).has_value());
  ParamValues many;
  for (std::size_t i = 0; i <= limits.max_values; ++i) many.emplace(std::to_string(i), 1.0);
  CHECK(Handler::validate(many, limits)->code == ErrorCode::bad_argument);
  many.erase(many.begin());
  CHECK_FALSE(Handler::validate(many, limits).has_value());  // exactly max_values
  CHECK(Handler::validate(ParamValues{{"", 1.0}}, limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(ParamValues{{std::string(129, 'k'), 1.0}}, limits)->code == ErrorCode::bad_argument);
  CHECK_FALSE(Handler::validate(ParamValues{{std::string(128, 'k'), 1.0}}, limits).has_value());
  CHECK(Handler::validate(ParamValues{{"a", std::nan("")}}, limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(ParamValues{{"a", std::array<double, 3>{0, 0, -INFINITY}}}, limits)->code == ErrorCode::bad_argument);

  CHECK_FALSE(Handler::validate(BranchRequest{"t=0.5", "", {}, ""}, limits).has_value());
  CHECK_FALSE(Handler::validate(BranchRequest{"#-1", "a.h5", one, "b.h5"}, limits).has_value());
  for (const char* from : {"live", "", "soon", "t=nan"}) {
    CAPTURE(from);
    CHECK(Handler::validate(BranchRequest{from, "", {}, ""}, limits)->code == ErrorCode::bad_argument);
  }
  CHECK(Handler::validate(BranchRequest{"latest", "", {}, std::string(5000, 'o')}, limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(BranchRequest{"latest", std::string("a\0b", 3), {}, ""}, limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(BranchRequest{"latest", "", {{"", 1.0}}, ""}, limits)->code == ErrorCode::bad_argument);
}

TEST_CASE("an offline service answers steering with unsupported; a steerable one is dispatched", "[collector][steer]") {
  test::FakeService offline;
  Handler h(offline);
  CHECK(h.capabilities() == std::vector<std::string>{"info", "steps", "window"});
  for (const Body& b : std::vector<Body>{StatusRequest{}, ControlRequest{"pause"}, ParametersRequest{},
                                         SetRequest{{{"physics.nu", 0.1}}}, BranchRequest{"latest", "", {}, ""}}) {
    CAPTURE(b.index());
    CHECK(error_of(h.handle(b)) == ErrorCode::unsupported);
  }
  // The defaults say so too, should a service announce what it does not implement.
  struct Boasting : test::FakeService {
    [[nodiscard]] std::vector<std::string> capabilities() const override { return {"info", "steps", "window", "status"}; }
  } boasting;
  Handler hb(boasting);
  CHECK(error_of(hb.handle(StatusRequest{})) == ErrorCode::unsupported);

  test::SteerableService live;
  Handler hl(live);
  CHECK(hl.capabilities().size() == 8);
  CHECK(std::get<StatusReply>(hl.handle(StatusRequest{})).status.state == RunState::running);
  const auto c = std::get<ControlReply>(hl.handle(ControlRequest{"pause"}));
  CHECK(c.state == RunState::paused);
  CHECK(c.step == 101);
  CHECK(error_of(hl.handle(ControlRequest{"sleep"})) == ErrorCode::bad_argument);
  CHECK(std::get<ParametersReply>(hl.handle(ParametersRequest{})).parameters.size() == 2);
  const auto s = std::get<SetReply>(hl.handle(SetRequest{{{"physics.nu", 0.5}}}));
  CHECK(std::get<double>(s.values.at("physics.nu")) == 0.5);
  CHECK(error_of(hl.handle(SetRequest{{{"physics.nu", -1.0}}})) == ErrorCode::bad_argument);  // the service's range
  CHECK(error_of(hl.handle(SetRequest{{{"physics.rho", 1.0}}})) == ErrorCode::bad_argument);
  CHECK(error_of(hl.handle(SetRequest{})) == ErrorCode::bad_argument);  // the handler's count
  const auto b = std::get<BranchReply>(hl.handle(BranchRequest{"latest", "fake.h5", {{"physics.nu", 0.2}}, ""}));
  CHECK((b.file == "fake.branch10.h5" && b.parent == "fake.h5" && b.step == 10));
  CHECK(error_of(hl.handle(BranchRequest{"latest", "other.h5", {}, ""})) == ErrorCode::bad_argument);
  CHECK(error_of(hl.handle(BranchRequest{"99", "", {}, ""})) == ErrorCode::no_such_step);
  CHECK(error_of(hl.handle(BranchRequest{"live", "", {}, ""})) == ErrorCode::bad_argument);
  CHECK(std::get<ControlReply>(hl.handle(ControlRequest{"stop"})).state == RunState::stopping);
  CHECK(error_of(hl.handle(ControlRequest{"resume"})) == ErrorCode::conflict);
  CHECK(error_of(hl.handle(SetRequest{{{"physics.nu", 0.5}}})) == ErrorCode::conflict);
  CHECK(std::get<ControlReply>(hl.handle(ControlRequest{"stop"})).state == RunState::stopping);  // idempotent
}

TEST_CASE("capability names follow the request types", "[collector][steer]") {
  CHECK(std::string(capability_of(MessageType::window_request)) == "window");
  CHECK(std::string(capability_of(MessageType::branch_request)) == "branch");
  CHECK(std::string(capability_of(MessageType::set_reply)).empty());
  CHECK(std::string(capability_of(MessageType::hello)).empty());
  CHECK(is_request(MessageType::set_request));
  CHECK_FALSE(is_request(MessageType::status_reply));
  CHECK(Handler::is_steering(MessageType::control_request));
  CHECK_FALSE(Handler::is_steering(MessageType::status_request));
  CHECK(parse_control_action("resume") == ControlAction::resume);
  CHECK_FALSE(parse_control_action("Resume"));
  CHECK(parse_run_state(to_string(RunState::finished)) == RunState::finished);
}

TEST_CASE("(1.8) forks with bad futures are refused before the service sees them", "[collector][steer][futures]") {
  const HandlerLimits limits;
  const ParamValues one{{"physics.nu", 0.1}};
  const auto fork = [](std::vector<FutureRequest> futures) { return BranchRequest{"latest", "a.h5", {}, "", std::move(futures)}; };
  CHECK_FALSE(Handler::validate(fork({{one, "a1.h5"}, {{}, ""}}), limits).has_value());
  // Values or an output beside the futures: which future would they be?
  auto beside = fork({{one, "a1.h5"}});
  beside.values = one;
  CHECK(Handler::validate(beside, limits)->code == ErrorCode::bad_argument);
  beside = fork({{one, "a1.h5"}});
  beside.output = "b.h5";
  const auto e = Handler::validate(beside, limits);
  REQUIRE(e.has_value());
  CHECK((e->code == ErrorCode::bad_argument && e->message.find("not beside") != std::string::npos));
  // At most max_futures (16) in one fork.
  std::vector<FutureRequest> many(limits.max_futures, FutureRequest{one, ""});
  CHECK_FALSE(Handler::validate(fork(many), limits).has_value());
  many.push_back({one, ""});
  const auto too_many = Handler::validate(fork(many), limits);
  REQUIRE(too_many.has_value());
  CHECK((too_many->code == ErrorCode::bad_argument && too_many->message.find("17 futures: at most 16") != std::string::npos));
  // Each future's output and values as a branch's.
  CHECK(Handler::validate(fork({{one, "a1.h5"}, {{}, std::string("a\0b.h5", 6)}}), limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(fork({{{}, std::string(limits.max_path_chars + 1, 'o')}}), limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(fork({{one, ""}, {{{"", 1.0}}, ""}}), limits)->code == ErrorCode::bad_argument);
  CHECK(Handler::validate(fork({{{{"physics.nu", std::nan("")}}, ""}}), limits)->code == ErrorCode::bad_argument);
  ParamValues too_many_values;
  for (std::size_t i = 0; i <= limits.max_values; ++i) too_many_values.emplace(std::to_string(i), 1.0);
  CHECK(Handler::validate(fork({{too_many_values, ""}}), limits)->code == ErrorCode::bad_argument);
  // The fork's `from` is a branch's: never live.
  auto live = fork({{one, ""}});
  live.from = "live";
  CHECK(Handler::validate(live, limits)->code == ErrorCode::bad_argument);
}

TEST_CASE("(1.8) the future a control or set names reaches the service; a refused fork does not",
          "[collector][steer][futures]") {
  struct Recording : test::SteerableService {
    std::vector<std::string> files;
    std::size_t forks = 0;
    ControlReply control(ControlAction a, const std::string& file) override {
      files.push_back(file);
      return SteerableService::control(a, file);
    }
    SetReply set(const ParamValues& values, const std::string& file) override {
      files.push_back(file);
      return SteerableService::set(values, file);
    }
    BranchReply branch(const BranchRequest& r) override {
      forks += r.futures.size();
      return SteerableService::branch(r);
    }
  } service;
  service.boundary = std::chrono::milliseconds(0);
  Handler h(service);
  CHECK(std::holds_alternative<ControlReply>(h.handle(ControlRequest{"pause", "b.h5"})));
  CHECK(std::holds_alternative<SetReply>(h.handle(SetRequest{{{"physics.nu", 0.5}}, "a1.h5"})));
  CHECK(std::holds_alternative<ControlReply>(h.handle(ControlRequest{"resume"})));
  CHECK(service.files == std::vector<std::string>{"b.h5", "a1.h5", ""});
  std::vector<FutureRequest> many(17, FutureRequest{{}, ""});
  CHECK(error_of(h.handle(BranchRequest{"latest", "", {}, "", many})) == ErrorCode::bad_argument);
  CHECK(service.forks == 0);
  many.pop_back();
  CHECK(std::holds_alternative<BranchReply>(h.handle(BranchRequest{"latest", "", {}, "", many})));
  CHECK(service.forks == 16);
}
