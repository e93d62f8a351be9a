/* A C code's restart on the C API: the checkpoint FILE@SEL names for a restart
 * (rewind_reader_find_checkpoint, collective reader), then a branch of it into OUT — the
 * file's lineage then names the step, for the h5py oracle to compare with the command
 * line's choice (restart_selectors.sh). Rank 0 prints "checkpoint STEP" and the note.
 *   mpiexec -n P capi_restart FILE SEL OUT */
#include <mpi.h>
#include <stdio.h>

#include "rewind/rewind.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, rc = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  rewind_reader* r = NULL;
  rewind_file* f = NULL;
  rewind_step_entry e;
  const char* note = "";
  if (argc == 4 && rewind_reader_open(&r, MPI_COMM_WORLD, argv[1]) == REWIND_OK &&
      rewind_reader_find_checkpoint(r, argv[2], &e, &note) == REWIND_OK && e.kind == REWIND_CHECKPOINT &&
      rewind_file_create_branch(&f, MPI_COMM_WORLD, argv[3], argv[1], e.step, 0, NULL, NULL) == REWIND_OK &&
      rewind_file_close(f) == REWIND_OK) {
    if (rank == 0) printf("checkpoint %lld\nnote: %s\n", (long long)e.step, note);
    rc = 0;
  } else if (rank == 0) {
    fprintf(stderr, "capi_restart: %s\n", argc == 4 ? rewind_last_error() : "usage: capi_restart FILE SEL OUT");
  }
  rewind_reader_close(r);
  MPI_Finalize();
  return rc;
}
