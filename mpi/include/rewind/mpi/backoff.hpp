// Waits that may last long poll instead of block. Under Open MPI's mpi_yield_when_idle
// (scripts/mpi-env.sh, needed to oversubscribe) a blocking call spins through sched_yield,
// so a process that waits for seconds or minutes (an idle neighbourhood server, an I/O
// rank between output steps, a paused compute rank) keeps a core busy all that time,
// taken from the compute ranks of a shared node. wait_until tests, spins briefly (a burst
// of back-to-back messages costs no sleep), then sleeps between tests with a nap that
// doubles up to a cap: an idle wait costs a wake-up per cap, an answer at most one cap.
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
};

/// Returns when `done()` returns true, testing as `b` says.
template <class Test>
void wait_until(Test&& done, const Backoff& b = {}) {
  using Clock = std::chrono::steady_clock;
  if (done()) return;
  const auto spin_end = Clock::now() + b.spin;
  while (Clock::now() < spin_end)
    if (done()) return;
  for (auto nap = b.first; !done(); nap = std::min(2 * nap, b.cap)) std::this_thread::sleep_for(nap);
}

}  // namespace rwd::mpi
