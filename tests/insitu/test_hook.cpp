// A hook for the tests (tests/insitu/cli_insitu.sh): logs every call and fails on
// purpose. args: "log=FILE fail_at=K mode=return|throw|init rank=R" (all optional):
// at step K, rank R of the hook's communicator (-1: every rank) returns an error,
// throws, or (mode=init) init fails. Rank 0 appends "init ... comm_size=N world_ranks=A,B"
// (who is in the hook's communicator), "step N grids=G", "finalize" to FILE. With
// REWIND_TEST_HOOK_LOADS=FILE in the environment, every process that loads the library
// appends "loaded by world rank R" to FILE (REWIND_TEST_HOOK_HOSTS=FILE: "world rank R on
// HOST", HOST its MPI processor name). Built with REWIND_TEST_ABI=N it claims ABI
// version N (the loader must refuse).
#include <mpi.h>
#include <rewind/insitu.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef REWIND_TEST_ABI
extern "C" int rewind_insitu_abi_version(void) { return REWIND_TEST_ABI; }
#else
REWIND_INSITU_DEFINE_ABI_VERSION()
#endif

namespace {
std::string log_file, mode = "return";
long long fail_at = -1;
int fail_rank = -1, rank = 0;
bool log_files = false;

void log(const std::string& line) {
  if (rank != 0 || log_file.empty()) return;
  if (std::FILE* f = std::fopen(log_file.c_str(), "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}
bool failing_rank() { return fail_rank < 0 || fail_rank == rank; }

// Which processes map the library (`rewind run` loads it after MPI_Init), and on which
// node (REWIND_TEST_HOOK_HOSTS: "world rank R on HOST").
__attribute__((constructor)) void note_load() {
  const char* file = std::getenv("REWIND_TEST_HOOK_LOADS");
  const char* hosts = std::getenv("REWIND_TEST_HOOK_HOSTS");
  int up = 0, world = -1;
  MPI_Initialized(&up);
  if (!up) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  if (std::FILE* f = file ? std::fopen(file, "a") : nullptr) {
    std::fprintf(f, "loaded by world rank %d\n", world);
    std::fclose(f);
  }
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int n = 0;
  MPI_Get_processor_name(host, &n);
  if (std::FILE* f = hosts ? std::fopen(hosts, "a") : nullptr) {
    std::fprintf(f, "world rank %d on %s\n", world, host);
    std::fclose(f);
  }
}
}  // namespace

extern "C" int rewind_insitu_init(const rewind_insitu_init_info* info, char* error, int error_size) {
  MPI_Comm_rank(MPI_Comm_f2c(info->comm), &rank);
  std::istringstream in(info->args);
  for (std::string kv; in >> kv;) {
    const auto eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (k == "log") log_file = v;
    else if (k == "fail_at") fail_at = std::stoll(v);
    else if (k == "mode") mode = v;
    else if (k == "rank") fail_rank = std::stoi(v);
    else if (k == "files") log_files = v == "1";
  }
  // Who shares the communicator: its size and its members' world ranks.
  const MPI_Comm comm = MPI_Comm_f2c(info->comm);
  int size = 0, world = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  std::vector<int> members(static_cast<std::size_t>(size));
  MPI_Allgather(&world, 1, MPI_INT, members.data(), 1, MPI_INT, comm);
  std::string ranks;
  for (int m : members) ranks += (ranks.empty() ? "" : ",") + std::to_string(m);
  log("init every=" + std::to_string(info->every) + " dim=" + std::to_string(info->dim) +
      " comm_size=" + std::to_string(size) + " world_ranks=" + ranks);
  if (mode == "init" && failing_rank()) {
    std::snprintf(error, static_cast<std::size_t>(error_size), "test hook: init fails on purpose");
    return 1;
  }
  return 0;
}

extern "C" int rewind_insitu_step(const rewind_insitu_step_desc* s, char* error, int error_size) {
  // A collective every call, as real hooks make: a rank left behind would hang here.
  long long grids = s->n_grids, total = 0;
  MPI_Allreduce(&grids, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_Comm_f2c(s->comm));
  // files=1 in the args: each line also names the step's run file (ABI 2), by its basename.
  std::string line = "step " + std::to_string(s->step) + " grids=" + std::to_string(total);
  if (log_files && s->file != nullptr) line += std::string(" file=") + std::filesystem::path(s->file).filename().string();
  log(line);
  if (s->step == fail_at && failing_rank()) {
    if (mode == "throw") throw std::runtime_error("test hook: throws on purpose at step " + std::to_string(s->step));
    std::snprintf(error, static_cast<std::size_t>(error_size), "test hook: fails on purpose at step %lld\nsecond line",
                  static_cast<long long>(s->step));
    return 1;
  }
  return 0;
}

extern "C" int rewind_insitu_finalize(char*, int) {
  log("finalize");
  return 0;
}
