/* What the C API's test programs (capi_roundtrip.c, capi_misuse.c, capi_scalars.c) share:
 * this rank, the communicator's size, the failures so far, check() ("ok" on rank 0, or
 * "FAIL" with the library's last message on the rank where it failed), finish() and a
 * grid of a 2-D quadtree as the programs describe it. Plain C99. */
#ifndef REWIND_TESTS_CAPI_CHECK_H
#define REWIND_TESTS_CAPI_CHECK_H
#include <stdint.h>
#include <stdio.h>

#include "rewind/rewind.h"

static int rank = 0, size = 1, failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    failures++;
    fprintf(stderr, "rank %d: FAIL %s (%s)\n", rank, what, rewind_last_error());
  } else if (rank == 0) {
    printf("ok   %s\n", what);
  }
}

/* The program's end on every rank: MPI finalized, exit status 0 when every rank's checks held. */
static int finish(void) {
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

typedef struct {
  uint64_t uid, parent;
  int level, n_children;
  uint64_t children[4];
  double bbox[6];
} grid;

#endif
