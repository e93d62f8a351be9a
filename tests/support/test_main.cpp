// The one Catch2 runner for every Rewind test binary.
//
// MPI is initialised here once, so a test binary runs unchanged on 1 rank or under
// mpiexec. Every rank runs every test case; the exit code is the maximum over ranks,
// so a failure on any rank fails the ctest entry. Ranks other than 0 report only
// failures, to keep logs readable.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <mpi.h>

#include <string>
#include <vector>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  Catch::Session session;
  std::vector<std::string> extra;
  int rc = session.applyCommandLine(argc, argv);
  if (rc == 0) {
    if (rank != 0) session.configData().showSuccessfulTests = false;
    rc = session.run();
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
