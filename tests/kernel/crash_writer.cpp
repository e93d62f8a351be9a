// Helper for the fault-injection test (crash_test.py).
//   writer:  mpiexec -n P kernel_crash_writer write FILE LOG PIDDIR HALO [STRATEGY [PHASE:N]]
//            writes checkpoints in a loop until killed (PHASE:N: every writing rank kills
//            itself the N-th time it reaches the writer's PHASE, e.g. flushed:3 between the
//            data's flush and the commit of step 3); rank 0 appends each committed
//            step number to LOG once the kernel says it is committed. HALO 1: arrays with
//            one ghost layer (packed); 0: halo-free arrays (written zero-copy). STRATEGY
//            "dedicated": the last rank is the I/O rank of the others (P >= 2), and a step
//            is logged when a later write_step reports it written (WriteStats::written_step).
//   append:  mpiexec -n P kernel_crash_writer append FILE LOG HALO
//            continues FILE in place as a restart does (Writer::append: uncommitted steps
//            go), from its last committed step, writes the next one and logs it.
//   verify:  kernel_crash_writer verify FILE LOG HALO
//            opens FILE read-only; every step in LOG must be committed; every committed
//            step must read back bit-exactly and restart. Exit 0 = consistent.
#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::ToyModel;

namespace {
constexpr int kBlock = 16;  // ~6.5 MB per checkpoint: a write window worth hitting
constexpr double kDt = 0.01;

void log_step(const std::string& log, std::int64_t step) {
  std::FILE* f = std::fopen(log.c_str(), "a");
  std::fprintf(f, "%lld\n", static_cast<long long>(step));
  std::fclose(f);
}

/// The hook that kills this process the n-th time the writer reaches `phase` ("" never).
std::function<void(const char*)> death_at(const std::string& at) {
  const auto colon = at.find(':');
  if (colon == std::string::npos) return {};
  return [phase = at.substr(0, colon), left = std::stoi(at.substr(colon + 1))](const char* ph) mutable {
    if (phase == ph && --left == 0) std::raise(SIGKILL);
  };
}

int write(const std::string& file, const std::string& log, const std::string& piddir, int halo,
          const std::string& strategy, const std::string& die_at) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    std::ofstream(piddir + "/pid." + std::to_string(rank)) << ::getpid() << "\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  IoOptions opt;
  WriterEnv env;
  env.on_phase = death_at(die_at);
  opt.write_views = false;
  MPI_Comm compute = MPI_COMM_WORLD;
  if (strategy == "dedicated") {
    const bool io = rank == size - 1;
    MPI_Comm io_comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, io ? MPI_UNDEFINED : 0, rank, &compute);
    MPI_Comm_split(MPI_COMM_WORLD, io ? 0 : MPI_UNDEFINED, rank, &io_comm);
    if (io) {
      serve_io_ranks(MPI_COMM_WORLD, io_comm, nullptr, env.on_phase);  // until killed
      return 0;
    }
    set_option(opt, "strategy", std::string(strategy));
    env.io_group = MPI_COMM_WORLD;
  }
  ToyModel m = ToyModel::build(compute, kBlock, halo);
  Writer w = Writer::create(compute, file, ToyModel::common(kBlock), opt, env);
  for (int i = 1; i <= 100000; ++i) {
    m.advance(kDt);
    const WriteStats st = w.write_step(ToyModel::checkpoint_step(i, i * kDt, kDt), m.describe());
    const std::int64_t committed = st.handoff.handed_off ? st.handoff.written_step : i;
    if (rank == 0 && committed >= 0) log_step(log, committed);
  }
  return 0;
}

int append(const std::string& file, const std::string& log, int halo) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  IoOptions opt;
  opt.write_views = false;
  std::int64_t last = -1;
  std::optional<ToyModel> m;
  {
    const Reader r = Reader::open(file, MPI_COMM_WORLD);
    const auto committed = r.steps(true);
    if (committed.empty()) return 0;  // nothing to continue from
    last = committed.back().step;
    m = ToyModel::restart(r, last, MPI_COMM_WORLD, halo);
  }
  Writer w = Writer::append(MPI_COMM_WORLD, file, opt);
  if (w.last_step() != last) {
    std::printf("FAIL: append continues after step %lld, the last committed is %lld\n",
                static_cast<long long>(w.last_step()), static_cast<long long>(last));
    return 1;
  }
  m->advance(kDt);
  w.write_step(ToyModel::checkpoint_step(last + 1, static_cast<double>(last + 1) * kDt, kDt), m->describe());
  w.close();
  if (rank == 0) log_step(log, last + 1);
  return 0;
}

int verify(const std::string& file, const std::string& log, int halo) {
  std::set<std::int64_t> logged;
  {
    std::ifstream in(log);
    std::int64_t s;
    while (in >> s) logged.insert(s);
  }
  std::unique_ptr<Reader> r;
  try {
    r = std::make_unique<Reader>(Reader::open(file));
  } catch (const FileError& e) {
    // Acceptable only if nothing was committed yet (killed before the first flush).
    std::printf("unreadable (%s), logged=%zu\n", e.what(), logged.size());
    return logged.empty() ? 0 : 1;
  }
  auto committed = r->steps(true);
  auto all = r->steps(false);
  std::set<std::int64_t> have;
  for (const auto& e : committed) have.insert(e.step);
  for (auto s : logged)
    if (!have.count(s)) {
      std::printf("FAIL: logged step %lld is not committed\n", static_cast<long long>(s));
      return 1;
    }
  ToyModel ref = ToyModel::build(MPI_COMM_SELF, kBlock, halo);
  std::int64_t at = 0;
  for (const auto& e : committed) {
    while (at < e.step) {
      ref.advance(kDt);
      ++at;
    }
    ToyModel back = ToyModel::restart(*r, e.step, MPI_COMM_SELF, halo);
    for (int slot = 0; slot < 6; ++slot) {
      auto want = ref.interior(slot);
      for (const auto& [uid, v] : back.interior(slot))
        if (!rwd::kernel::test::bit_equal(v, want.at(uid))) {
          std::printf("FAIL: step %lld slot %d differs\n", static_cast<long long>(e.step), slot);
          return 1;
        }
    }
    back.advance(kDt);  // restartable: the state continues
  }
  std::printf("ok committed=%zu uncommitted=%zu logged=%zu\n", committed.size(), all.size() - committed.size(),
              logged.size());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 2;
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "write" && argc >= 6 && argc <= 8)
    rc = write(argv[2], argv[3], argv[4], std::atoi(argv[5]), argc >= 7 ? argv[6] : "collective",
               argc == 8 ? argv[7] : "");
  else if (mode == "append" && argc == 5) rc = append(argv[2], argv[3], std::atoi(argv[4]));
  else if (mode == "verify" && argc == 5) rc = verify(argv[2], argv[3], std::atoi(argv[4]));
  else
    std::fprintf(stderr,
                 "usage: kernel_crash_writer write FILE LOG PIDDIR HALO [STRATEGY [PHASE:N]] | append FILE LOG HALO | "
                 "verify FILE LOG HALO\n");
  MPI_Finalize();
  return rc;
}
