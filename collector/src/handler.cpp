// Request validation and dispatch to the Service (see handler.hpp).
#include "rewind/collector/handler.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace rwd::collector {

namespace {

bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); }

ErrorReply error(ErrorCode c, std::string m) { return {c, std::move(m)}; }

std::string basename_of(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

std::string listed(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// The served file `file` names (revision 1.9): itself, or the one served file with its
// basename ("fast.h5" for out/demo/fast.h5); none or several: one line listing the files
// served. `file` is rewritten to the served name.
std::optional<ErrorReply> resolve_file(const std::vector<std::string>& files, std::string& file) {
  if (file.empty() || std::find(files.begin(), files.end(), file) != files.end()) return std::nullopt;
  std::vector<std::string> same;
  for (const auto& f : files)
    if (basename_of(f) == basename_of(file)) same.push_back(f);
  if (same.size() == 1) {
    file = same.front();
    return std::nullopt;
  }
  if (same.empty())
    return error(ErrorCode::bad_argument, "no file \"" + file + "\" on this server (served: " + listed(files) + ")");
  return error(ErrorCode::bad_argument,
               "\"" + file + "\" names more than one served file (" + listed(same) + "): give its path as served");
}

[[noreturn]] void unsupported(const char* what) {
  throw ServiceError(ErrorCode::unsupported,
                     std::string(what) + ": this server does not steer a run (an offline server answers windows only)");
}

}  // namespace

std::vector<std::string> Service::capabilities() const { return {"info", "steps", "window"}; }
RunStatus Service::status() { unsupported("status"); }
ControlReply Service::control(ControlAction, const std::string&) { unsupported("control"); }
std::vector<ParameterInfo> Service::parameters() { unsupported("parameters"); }
SetReply Service::set(const ParamValues&, const std::string&) { unsupported("set"); }
BranchReply Service::branch(const BranchRequest&) { unsupported("branch"); }

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
  const auto codec = choose_codec(hello.codecs);
  if (!codec) return error(ErrorCode::bad_argument, "the hello offers no codec this server speaks (none, zstd)");
  return HelloReply{server_name, kProtocolVersion, capabilities, *codec, hello.piece_table};
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
  if (r.lod != "uniform" && r.lod != "adaptive")
    return error(ErrorCode::bad_argument, "lod \"" + r.lod.substr(0, 32) + "\" is not uniform or adaptive");
  return std::nullopt;
}

std::optional<ErrorReply> Handler::validate(const ControlRequest& r) {
  if (parse_control_action(r.action)) return std::nullopt;
  return error(ErrorCode::bad_argument, "action \"" + r.action.substr(0, 32) + "\" is not pause, resume or stop");
}

std::optional<ErrorReply> Handler::validate(const ParamValues& values, const HandlerLimits& limits, bool allow_empty) {
  if ((values.empty() && !allow_empty) || values.size() > limits.max_values)
    return error(ErrorCode::bad_argument, std::to_string(values.size()) + " values given, expected " +
                                              (allow_empty ? "0" : "1") + " .. " + std::to_string(limits.max_values));
  for (const auto& [name, v] : values) {
    if (name.empty() || name.size() > limits.max_name_chars)
      return error(ErrorCode::bad_argument, "parameter name \"" + name.substr(0, limits.max_name_chars) + "...\" is empty or longer than " +
                                                std::to_string(limits.max_name_chars) + " characters");
    const std::string& key = name;  // clang 14 cannot capture a structured binding
    const auto bad = [&key] { return error(ErrorCode::bad_argument, key + " is not finite"); };
    if (const auto* d = std::get_if<double>(&v)) {
      if (!std::isfinite(*d)) return bad();
    } else {
      for (const double x : std::get<std::array<double, 3>>(v))
        if (!std::isfinite(x)) return bad();
    }
  }
  return std::nullopt;
}

std::optional<ErrorReply> Handler::validate(const BranchRequest& r, const HandlerLimits& limits) {
  if (r.from == "live" || r.from.size() > limits.max_selector_chars || !valid_time_selector(r.from))
    return error(ErrorCode::bad_argument, "from \"" + r.from.substr(0, limits.max_selector_chars) +
                                              "\" is not latest, N, #i or t=T (a committed step)");
  const auto bad_path = [&](const std::string& path) {
    return path.size() > limits.max_path_chars || path.find('\0') != std::string::npos;
  };
  const auto path_error = [&] {
    return error(ErrorCode::bad_argument, "file name longer than " + std::to_string(limits.max_path_chars) +
                                              " characters or containing NUL");
  };
  if (bad_path(r.file) || bad_path(r.output)) return path_error();
  if (r.futures.empty()) return validate(r.values, limits, true);
  // A fork (1.8): each future its values and output; none beside them.
  if (!r.values.empty() || !r.output.empty())
    return error(ErrorCode::bad_argument, "a branch with futures gives each future's values and output in it, not beside");
  if (r.futures.size() > limits.max_futures)
    return error(ErrorCode::bad_argument, std::to_string(r.futures.size()) + " futures: at most " +
                                              std::to_string(limits.max_futures) + " in one branch");
  for (const auto& f : r.futures) {
    if (bad_path(f.output)) return path_error();
    if (auto e = validate(f.values, limits, true)) return e;
  }
  return std::nullopt;
}

Handler::Handler(Service& service, HandlerLimits limits)
    : service_(service), limits_(limits), capabilities_(service.capabilities()) {}

bool Handler::is_steering(MessageType t) {
  return t == MessageType::control_request || t == MessageType::set_request || t == MessageType::branch_request;
}

void Handler::recycle(Body&& reply) noexcept {
  if (auto* w = std::get_if<WindowReply>(&reply)) service_.recycle(std::move(*w));
}

bool Handler::offers(MessageType t) const {
  // info, steps and window are every service's duty; the 1.1 requests must be announced.
  if (t == MessageType::info_request || t == MessageType::steps_request || t == MessageType::window_request) return true;
  return std::find(capabilities_.begin(), capabilities_.end(), capability_of(t)) != capabilities_.end();
}

Body Handler::handle(const Body& request) { return handle(request, nullptr); }

Body Handler::handle(const Body& request, WindowStream* stream) {
  const auto t = type_of(request);
  try {
    if (*capability_of(t) == '\0') return error(ErrorCode::unknown_type, "not a request this handler answers");
    if (!offers(t))
      return error(ErrorCode::unsupported, std::string(capability_of(t)) +
                                               ": not offered by this server (an offline server answers windows only)");
    return is_steering(t) ? handle_steering(request) : handle_query(request, stream);
  } catch (const ServiceError& e) {
    return error(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return error(ErrorCode::internal, e.what());
  }
}

Body Handler::handle_steering(const Body& request) {
  if (const auto* c = std::get_if<ControlRequest>(&request)) {
    if (auto e = validate(*c)) return *e;
    const std::lock_guard lock(steer_mutex_);
    return service_.control(*parse_control_action(c->action), c->file);
  }
  if (const auto* s = std::get_if<SetRequest>(&request)) {
    if (auto e = validate(s->values, limits_)) return *e;
    const std::lock_guard lock(steer_mutex_);
    return service_.set(s->values, s->file);
  }
  BranchRequest b = std::get<BranchRequest>(request);
  if (auto e = validate(b, limits_)) return *e;
  if (!b.file.empty()) {
    std::vector<std::string> files;
    {
      const std::lock_guard lock(query_mutex_);  // info() belongs to the query lane
      files = service_.info().files;
    }
    if (auto e = resolve_file(files, b.file)) return *e;
  }
  const std::lock_guard lock(steer_mutex_);
  return service_.branch(b);
}

Body Handler::handle_query(const Body& request, WindowStream* stream) {
  const auto* w = std::get_if<WindowRequest>(&request);
  if (w != nullptr) {
    if (auto e = validate(*w, limits_)) return *e;
  }
  const std::lock_guard lock(query_mutex_);
  if (std::holds_alternative<InfoRequest>(request)) return InfoReply{service_.info()};
  if (std::holds_alternative<StepsRequest>(request)) return StepsReply{service_.steps()};
  if (std::holds_alternative<StatusRequest>(request)) return StatusReply{service_.status()};
  if (std::holds_alternative<ParametersRequest>(request)) return ParametersReply{service_.parameters()};
  const auto info = service_.info();
  std::string names;
  for (const auto& v : info.variables) names += (names.empty() ? "" : ", ") + v.name;
  for (const auto& v : w->variables) {
    const bool known = std::any_of(info.variables.begin(), info.variables.end(), [&](const VariableInfo& x) { return x.name == v; });
    if (!known) return error(ErrorCode::unknown_variable, "no variable \"" + v + "\" (there are " + names + ")");
  }
  WindowRequest q = *w;
  if (auto e = resolve_file(info.files, q.file)) return *e;
  if (q.time == "live" && !info.live) q.time = "latest";  // an offline server's newest step is what "live" can mean
  // No variables named (revision 1.3): every variable of the step. A file's step says
  // which it stores (FileService); the live state holds them all.
  if (q.variables.empty() && q.time == "live")
    for (const auto& v : info.variables) q.variables.push_back(v.name);
  return service_.window(q, stream);
}

}  // namespace rwd::collector
