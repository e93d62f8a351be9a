// The writer/reader lock of a run file (step_lock.hpp): the writer holds it from the
// start of a step to its last flush, so a reader following the file (rewind serve) never
// reads a step's metadata half written; a reader holding it delays the writer, boundedly.
#include <catch2/catch.hpp>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "mpi_test_util.hpp"
#include "rewind/kernel/step_lock.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using namespace std::chrono_literals;
using rwd::kernel::test::ToyModel;
using Clock = std::chrono::steady_clock;

namespace {
IoOptions without_views() {
  IoOptions o;
  o.write_views = false;
  return o;
}

StepInfo checkpoint(std::int64_t step) { return ToyModel::checkpoint_step(step, 0.1 * static_cast<double>(step), 0.1); }
}  // namespace

TEST_CASE("StepLock: readers share it, a writer excludes them, waits are bounded", "[kernel][lock]") {
  const std::string path = rwd::kernel::test::test_path("step_lock_modes");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), without_views()).write_step(checkpoint(1), m.describe());
  if (rwd::test::world_rank() != 0) {  // one process takes and drops locks; the others read
    CHECK(Reader::open(path).steps().size() == 1);  // the step committed, whole, for every rank
    return;
  }
  {
    const auto a = StepLock::take(path, StepLock::Mode::shared, 0ms);
    const auto b = StepLock::take(path, StepLock::Mode::shared, 0ms);
    CHECK((a.held() && b.held()));
    const auto t0 = Clock::now();
    const auto w = StepLock::take(path, StepLock::Mode::exclusive, 200ms);
    CHECK_FALSE(w.held());
    CHECK(w.supported());
    CHECK(Clock::now() - t0 >= 200ms);
  }
  auto w = StepLock::take(path, StepLock::Mode::exclusive, 0ms);
  CHECK(w.held());
  CHECK_FALSE(StepLock::take(path, StepLock::Mode::shared, 50ms).held());
  w.release();
  CHECK(StepLock::take(path, StepLock::Mode::shared, 0ms).held());
  const auto none = StepLock::take(path + ".missing", StepLock::Mode::shared, 0ms);
  CHECK_FALSE(none.held());
  CHECK_FALSE(none.supported());
}

TEST_CASE("a writer holds the lock from the start of a step to its last flush", "[kernel][lock]") {
  const std::string path = rwd::kernel::test::test_path("step_lock_writer");
  Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), without_views()).close();
  std::vector<std::string> phases, readable;  // every phase hook, and those a reader could enter
  WriterEnv watched;
  watched.on_phase = [&](const char* ph) {
    phases.emplace_back(ph);
    if (StepLock::take(path, StepLock::Mode::shared, 0ms).held()) readable.emplace_back(ph);
  };
  const ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  Writer a = Writer::append(MPI_COMM_WORLD, path, without_views(), watched);
  a.write_step(checkpoint(1), m.describe());
  // Every phase of the step (datasets created, data written, flushed, marker flushed, index row) ran
  // with the lock held; the last, "committed", after it was dropped.
  CHECK(phases.size() >= 4);
  CHECK(std::count(phases.begin(), phases.end(), "flushed") == 1);
  CHECK(std::count(phases.begin(), phases.end(), "marked") == 1);
  CHECK(std::count(phases.begin(), phases.end(), "indexed") == 1);
  CHECK(phases.back() == "committed");
  // Released once the step is committed (by rank 0, which other ranks need not wait for).
  if (rwd::test::world_rank() == 0) CHECK(readable == std::vector<std::string>{"committed"});
  CHECK(readable.size() <= 1);
  if (!readable.empty()) CHECK(readable.front() == "committed");
  // A reader inside a request delays the next step until it is done.
  auto reader = StepLock::take(path, StepLock::Mode::shared, 0ms);
  REQUIRE(reader.held());
  std::thread done([&] {
    std::this_thread::sleep_for(300ms);
    reader.release();
  });
  const auto t0 = Clock::now();
  a.write_step(checkpoint(2), m.describe());
  const auto took = Clock::now() - t0;
  done.join();
  int waited = took >= 250ms ? 1 : 0, all = 0;
  MPI_Allreduce(&waited, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  CHECK(all == 1);
  CHECK(Reader::open(path).steps().size() == 2);
}
