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

TEST_CASE("hello: version and token", "[collector]") {
  const std::vector<std::string> caps{"window"};
  CHECK(std::holds_alternative<HelloReply>(answer_hello(Hello{1, "", "c"}, "", "s", caps)));
  CHECK(std::holds_alternative<HelloReply>(answer_hello(Hello{1, "anything", "c"}, "", "s", caps)));
  CHECK(std::holds_alternative<HelloReply>(answer_hello(Hello{1, "s3cret", "c"}, "s3cret", "s", caps)));
  CHECK(error_of(answer_hello(Hello{1, "s3cre", "c"}, "s3cret", "s", caps)) == ErrorCode::unauthorized);
  CHECK(error_of(answer_hello(Hello{1, "", "c"}, "s3cret", "s", caps)) == ErrorCode::unauthorized);
  CHECK(error_of(answer_hello(Hello{2, "s3cret", "c"}, "s3cret", "s", caps)) == ErrorCode::bad_version);
  CHECK(same_token("abc", "abc"));
  CHECK_FALSE(same_token("abc", "abd"));
  CHECK_FALSE(same_token("abc", std::string("abc\0", 4)));
  CHECK_FALSE(same_token("", "a"));
}
