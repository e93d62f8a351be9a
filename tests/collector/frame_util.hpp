// Test helpers: hand-made collector frames (to send lies the encoder never writes)
// and a deterministic fake Service whose every value a client can recompute.
#pragma once
#include <zstd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rewind/collector/handler.hpp"
#include "rewind/collector/messages.hpp"

namespace rwd::collector::test {

inline void put_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out.push_back(static_cast<std::byte>((v >> (8 * b)) & 0xffu));
}

/// A frame with a correct header (unless told otherwise) around `json` and `tail`.
inline std::vector<std::byte> make_frame(std::uint16_t type, const std::string& json, const std::vector<std::byte>& tail = {},
                                         std::uint16_t version = kProtocolVersion, const char* magic = "RWCL") {
  std::vector<std::byte> f;
  for (int i = 0; i < 4; ++i) f.push_back(static_cast<std::byte>(magic[i]));
  put_le(f, version, 2);
  put_le(f, type, 2);
  put_le(f, 7, 4);
  put_le(f, 0, 4);
  put_le(f, 4 + json.size() + tail.size(), 8);
  put_le(f, json.size(), 4);
  for (const char c : json) f.push_back(static_cast<std::byte>(c));
  f.insert(f.end(), tail.begin(), tail.end());
  return f;
}

inline std::vector<std::byte> zstd(const void* data, std::size_t n) {
  std::vector<std::byte> out(ZSTD_compressBound(n));
  out.resize(ZSTD_compress(out.data(), out.size(), data, n, 1));
  return out;
}

/// The value the fake service puts in cell `i` of variable `v` for a request with `budget`.
inline double fake_value(std::size_t v, std::uint64_t i, std::uint64_t budget) {
  return static_cast<double>(budget) * 0.5 + static_cast<double>(v) * 1e7 + static_cast<double>(i) * 0.25;
}

/// Deterministic synthetic pieces: 1 + budget % 4 pieces, budget cells in total (x only).
class FakeService : public Service {
 public:
  std::chrono::milliseconds delay{0};
  ServerInfo info() override {
    ServerInfo i;
    i.files = {"fake.h5"};
    i.variables = {{"p", "Pa"}, {"u", "m/s"}, {"cell_index", "1"}};
    i.domain_lo = {0, 0, 0};
    i.domain_hi = {1, 1, 1};
    i.dim = 3;
    i.block = {8, 8, 8};
    return i;
  }
  std::vector<StepRecord> steps() override {
    return {{0, 0.0, "checkpoint", "fake.h5"}, {5, 0.05, "visualisation", "fake.h5"}, {10, 0.1, "checkpoint", "fake.h5"}};
  }
  WindowReply window(const WindowRequest& r) override {
    if (r.time == "99") throw ServiceError(ErrorCode::no_such_step, "no step 99");
    if (r.time == "#7") throw std::runtime_error("disk on fire");
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    WindowReply w;
    w.step = 10;
    w.time = 0.1;
    w.file = "fake.h5";
    w.level = static_cast<std::int32_t>(r.budget % 5);
    w.lo = r.lo;
    w.hi = r.hi;
    const std::uint64_t n = 1 + r.budget % 4;
    std::uint64_t left = r.budget;
    for (std::uint64_t k = 0; k < n; ++k) {
      PieceMessage p;
      p.row = static_cast<std::int64_t>(k);
      p.uid = 1000 + k;
      p.level = w.level;
      const std::uint64_t c = k + 1 == n ? left : r.budget / n;
      left -= c;
      p.count = {static_cast<std::int32_t>(c), 1, 1};
      p.spacing = {0.5, 0.5, 0.5};
      w.pieces.push_back(p);
    }
    w.cells = r.budget;
    w.variables = r.variables;
    for (std::size_t v = 0; v < r.variables.size(); ++v) {
      ValueArray a(r.budget);
      for (std::uint64_t i = 0; i < r.budget; ++i) a[i] = fake_value(v, i, r.budget);
      w.values.push_back(std::move(a));
    }
    w.cell_type.resize(r.budget);
    for (std::uint64_t i = 0; i < r.budget; ++i) w.cell_type[i] = static_cast<std::uint8_t>(i % 7);
    return w;
  }
};

/// FakeService plus steering, as a live run would answer it: every steering call waits
/// `boundary` (the next step boundary), then the step advances by one. `hang` makes
/// steering calls wait until stopping() (a run that never reaches a boundary).
/// Thread-safe the way Service asks: steering state under its own mutex.
class SteerableService : public FakeService {
 public:
  std::chrono::milliseconds boundary{20};
  bool hang = false;

  [[nodiscard]] std::vector<std::string> capabilities() const override {
    return {"info", "steps", "window", "status", "control", "parameters", "set", "branch"};
  }
  RunStatus status() override {
    const std::lock_guard lock(mutex_);
    return {state_, step_, time(), 12.5, "fake.h5", "", 2, 1};
  }
  ControlReply control(ControlAction action, const std::string&) override {
    std::unique_lock lock(mutex_);
    wait_boundary(lock);
    if (state_ == RunState::stopping || state_ == RunState::finished) {
      if (action != ControlAction::stop) throw ServiceError(ErrorCode::conflict, "the run is stopping");
    } else {
      state_ = action == ControlAction::pause ? RunState::paused : action == ControlAction::resume ? RunState::running
                                                                                                   : RunState::stopping;
    }
    return {state_, step_, time()};
  }
  std::vector<ParameterInfo> parameters() override {
    const std::lock_guard lock(mutex_);
    return {{"boundary.xmin.velocity", velocity_, "m/s", -10, 10, "inflow velocity"},
            {"physics.nu", nu_, "m^2/s", 1e-9, 10, "kinematic viscosity"}};
  }
  SetReply set(const ParamValues& values, const std::string&) override {
    std::unique_lock lock(mutex_);
    if (state_ == RunState::stopping) throw ServiceError(ErrorCode::conflict, "the run is stopping");
    for (const auto& [name, v] : values) {
      if (name == "physics.nu") {
        const auto* d = std::get_if<double>(&v);
        if (d == nullptr || *d < 1e-9 || *d > 10) throw ServiceError(ErrorCode::bad_argument, "physics.nu is outside [1e-09, 10]");
      } else if (name != "boundary.xmin.velocity" || !std::holds_alternative<std::array<double, 3>>(v)) {
        throw ServiceError(ErrorCode::bad_argument, "cannot steer " + name);
      }
    }
    wait_boundary(lock);
    for (const auto& [name, v] : values) (name == "physics.nu" ? nu_ : velocity_) = v;
    return {step_, time(), values};
  }
  BranchReply branch(const BranchRequest& r) override {
    std::unique_lock lock(mutex_);
    if (r.from == "99") throw ServiceError(ErrorCode::no_such_step, "no step 99");
    wait_boundary(lock);
    const std::int64_t from = r.from == "latest" ? 10 : 5;
    const std::string out = r.output.empty() ? "fake.branch" + std::to_string(from) + ".h5" : r.output;
    return {out, r.file.empty() ? "fake.h5" : r.file, from, static_cast<double>(from) * 0.01};
  }
  void stopping() noexcept override {
    {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

 private:
  double time() const { return static_cast<double>(step_) * 0.01; }
  void wait_boundary(std::unique_lock<std::mutex>& lock) {
    if (hang) {
      cv_.wait(lock, [&] { return stopped_; });
      throw ServiceError(ErrorCode::internal, "the run stopped");
    }
    cv_.wait_for(lock, boundary, [&] { return stopped_; });
    ++step_;
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopped_ = false;
  RunState state_ = RunState::running;
  std::int64_t step_ = 100;
  ParamValue nu_ = 0.01;
  ParamValue velocity_ = std::array<double, 3>{1, 0, 0};
};

}  // namespace rwd::collector::test
