// Request validation and dispatch to the Service (see handler.hpp).
#include "rewind/collector/handler.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace rwd::collector {

namespace {

bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); }

ErrorReply error(ErrorCode c, std::string m) { return {c, std::move(m)}; }

}  // namespace

bool valid_time_selector(const std::string& s) {
  if (s == "live" || s == "latest") return true;
  if (all_digits(s)) return s.size() <= 18;
  if (s.size() >= 2 && s[0] == '#') {
    const std::string_view rest = std::string_view(s).substr(s[1] == '-' ? 2 : 1);
    return all_digits(rest) && rest.size() <= 18;
  }
  if (s.size() > 2 && s.compare(0, 2, "t=") == 0) {
    double t = 0;
    const char* b = s.data() + 2;
    const char* e = s.data() + s.size();
    const auto [p, ec] = std::from_chars(b, e, t);
    return ec == std::errc() && p == e && std::isfinite(t);
  }
  return false;
}

bool same_token(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

Body answer_hello(const Hello& hello, const std::string& token, const std::string& server_name,
                  const std::vector<std::string>& capabilities) {
  if (hello.protocol != kProtocolVersion)
    return error(ErrorCode::bad_version, "client speaks protocol " + std::to_string(hello.protocol) + ", this server " +
                                             std::to_string(kProtocolVersion));
  if (!token.empty() && !same_token(hello.token, token)) return error(ErrorCode::unauthorized, "wrong or missing token");
  return HelloReply{server_name, kProtocolVersion, capabilities};
}

std::optional<ErrorReply> Handler::validate(const WindowRequest& r, const HandlerLimits& limits) {
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(r.lo[a]) || !std::isfinite(r.hi[a])) return error(ErrorCode::bad_argument, "box is not finite");
    if (r.lo[a] > r.hi[a]) return error(ErrorCode::bad_argument, "box has lo > hi on axis " + std::to_string(a));
  }
  if (r.budget == 0 || r.budget > limits.max_budget)
    return error(ErrorCode::bad_argument,
                 "budget " + std::to_string(r.budget) + " outside 1 .. " + std::to_string(limits.max_budget));
  if (r.time.size() > limits.max_selector_chars || !valid_time_selector(r.time))
    return error(ErrorCode::bad_argument, "time selector \"" + r.time.substr(0, limits.max_selector_chars) +
                                              "\" is not live, latest, N, #i or t=T");
  if (r.variables.size() > limits.max_variables)
    return error(ErrorCode::bad_argument, std::to_string(r.variables.size()) + " variables asked, at most " +
                                              std::to_string(limits.max_variables));
  return std::nullopt;
}

Body Handler::handle(const Body& request) {
  try {
    if (std::holds_alternative<InfoRequest>(request)) {
      const std::lock_guard lock(mutex_);
      return InfoReply{service_.info()};
    }
    if (std::holds_alternative<StepsRequest>(request)) {
      const std::lock_guard lock(mutex_);
      return StepsReply{service_.steps()};
    }
    if (const auto* w = std::get_if<WindowRequest>(&request)) {
      if (auto e = validate(*w, limits_)) return *e;
      const std::lock_guard lock(mutex_);
      const auto info = service_.info();
      for (const auto& v : w->variables) {
        const bool known = std::any_of(info.variables.begin(), info.variables.end(), [&](const VariableInfo& x) { return x.name == v; });
        if (!known) return error(ErrorCode::unknown_variable, "no variable \"" + v + "\"");
      }
      if (!w->file.empty() && std::find(info.files.begin(), info.files.end(), w->file) == info.files.end())
        return error(ErrorCode::bad_argument, "no file \"" + w->file + "\" on this server");
      if (w->time == "live" && !info.live) {
        WindowRequest latest = *w;
        latest.time = "latest";  // an offline server's newest step is what "live" can mean
        return service_.window(latest);
      }
      return service_.window(*w);
    }
    return error(ErrorCode::unknown_type, "not a request this handler answers");
  } catch (const ServiceError& e) {
    return error(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return error(ErrorCode::internal, e.what());
  }
}

}  // namespace rwd::collector
