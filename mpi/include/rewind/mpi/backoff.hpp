// Waits that may last long poll instead of block. Under Open MPI's mpi_yield_when_idle
// (scripts/mpi-env.sh, needed to oversubscribe) a blocking call spins through sched_yield,
// so a process that waits for seconds or minutes (an idle neighbourhood server, an I/O
// rank between output steps, a paused compute rank) keeps a core busy all that time,
// taken from the compute ranks of a shared node. wait_until tests, spins briefly (a burst
// of back-to-back messages costs no sleep), then sleeps between tests with a nap that
// doubles up to a cap: an idle wait costs a wake-up per cap, an answer at most one cap.
// Right after a request (until `warm_until`, which the caller moves on) the cap is the
// lower `warm_cap`: an interactive client asks in bursts (a window, then the next), and
// each hop of a request (collector, neighbourhood server, compute root, the other compute
// ranks) would otherwise add up to a whole cap to it.
// Header-only, C++17.
#pragma once
#include <algorithm>
#include <chrono>
#include <thread>

namespace rwd::mpi {

struct Backoff {
  std::chrono::microseconds spin{100};   ///< test without sleeping this long first
  std::chrono::microseconds first{20};   ///< the first nap after the spin
  std::chrono::microseconds cap{1000};   ///< the longest nap (the added latency at worst)
  std::chrono::microseconds warm_cap{100};  ///< the longest nap before warm_until
  std::chrono::steady_clock::time_point warm_until{};  ///< set by the caller after a request

  /// Warm for `d` from now (after a request: the next one is likely soon).
  void warm_for(std::chrono::steady_clock::duration d) { warm_until = std::chrono::steady_clock::now() + d; }
};

/// How long a waiter stays warm after a request (see Backoff): long enough to span a
/// client's think time between windows of a burst, short enough that an idle run pays
/// for at most this much polling at warm_cap after each request.
inline constexpr std::chrono::milliseconds kWarmAfterRequest{250};

/// Returns when `done()` returns true, testing as `b` says.
template <class Test>
void wait_until(Test&& done, const Backoff& b = {}) {
  using Clock = std::chrono::steady_clock;
  if (done()) return;
  const auto spin_end = Clock::now() + b.spin;
  while (Clock::now() < spin_end)
    if (done()) return;
  for (auto nap = b.first; !done();) {
    std::this_thread::sleep_for(nap);
    nap = std::min(2 * nap, Clock::now() < b.warm_until ? std::min(b.cap, b.warm_cap) : b.cap);
  }
}

}  // namespace rwd::mpi
