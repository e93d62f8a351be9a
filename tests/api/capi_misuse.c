/* The mistakes a code makes with the C API's collective calls, in plain C99: ranks that
 * pass different scalars (a time one ulp apart, a kind, a step, a vars list, a branch
 * path), ranks in different calls, values no run has (NaN or infinite time, NaN dt, time
 * going back), a tree that is not a tree (a box outside its parent, a box of the wrong
 * size, a child two levels below its parent, a uid on two ranks), a field slot the file
 * has no variable for, a branch of a visualisation step, and the live event loop on an
 * error. Each must fail with the same status on every rank, one line naming what is
 * wrong, before anything is written; the good steps between them are committed as usual:
 * steps 1 (t = 0), 2 (t = 0.1), checkpoints, and 3 (t = 0.2), a float32 visualisation
 * step of T. Every grid (parents too) carries value(uid, var, step, i, j) below, which
 * tests/api/misuse_oracle.py checks with h5py.
 *   mpiexec -n P capi_misuse OUT.h5      (P >= 2; exit 0: every check held)
 * Rank 0 prints "refused: MESSAGE" for each refused call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_check.h"
#include "rewind/rewind.h"

#define S 4 /* cells per grid and axis */
#define H 1 /* halo */
#define NX (S + 2 * H)
#define N (NX * NX * (1 + 2 * H))
#define NG 9

/* A refused call: `want` on every rank, one line holding `word` (and `word2`). */
static void refused(int rc, int want, const char* what, const char* word, const char* word2) {
  const char* msg = rewind_last_error();
  int lo = 0, hi = 0;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int ok = rc == want && lo == hi && strchr(msg, '\n') == NULL && strstr(msg, word) != NULL &&
           (word2 == NULL || strstr(msg, word2) != NULL);
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && rc != REWIND_OK) printf("refused: %s\n", msg);
  if (!ok)
    fprintf(stderr, "rank %d: status %d (want %d on every rank: %d..%d), message: %s\n", rank, rc, want, lo, hi, msg);
  check(all, what);
}

static grid g[NG];
static double data[NG][2][N];

static double value(uint64_t uid, int var, int step, int i, int j) {
  return step * 1000.0 + var * 100.0 + (double)uid + (i + S * j) / 64.0;
}

/* uid 1 the root; 10..13 its children; 20..23 the children of 10. */
static void make_tree(void) {
  g[0] = (grid){1, UINT64_MAX, 0, 4, {10, 11, 12, 13}, {0, 1, 0, 1, 0, 1}};
  for (int c = 0; c < 4; ++c) {
    const double x = 0.5 * (c & 1), y = 0.5 * (c >> 1);
    g[1 + c] = (grid){10 + (uint64_t)c, 1, 1, c == 0 ? 4 : 0, {20, 21, 22, 23}, {x, x + 0.5, y, y + 0.5, 0, 1}};
  }
  for (int d = 0; d < 4; ++d) {
    const double x = 0.25 * (d & 1), y = 0.25 * (d >> 1);
    g[5 + d] = (grid){20 + (uint64_t)d, 10, 2, 0, {0}, {x, x + 0.25, y, y + 0.25, 0, 1}};
  }
}

enum { GOOD, OUTSIDE_PARENT, WRONG_SIZE, TWO_LEVELS, SAME_UID, SLOT_7 };

/* This rank's grids (round robin) for `step`, every grid with both arrays, spoiled as
 * `how` says. */
static void describe(rewind_grids* grids, int step, int how) {
  rewind_grids_clear(grids);
  for (int i = 0; i < NG; ++i) {
    if (i % size != rank) continue;
    grid q = g[i];
    if (how == OUTSIDE_PARENT && q.uid == 20) q.bbox[0] = 0.5, q.bbox[1] = 0.75; /* in 11, not in its parent 10 */
    if (how == WRONG_SIZE && q.uid == 11) q.bbox[3] = 0.4;
    if (how == TWO_LEVELS && q.uid == 20) q.parent = 1;
    if (how == SAME_UID && i == 3) q.uid = 11; /* grid 12 named 11: 11 lives on another rank */
    int64_t at = -1;
    rewind_grids_add(grids, q.uid, q.level, q.uid, q.bbox, q.parent, q.n_children, q.children, &at);
    for (int v = 0; v < 2; ++v) {
      for (int j = 0; j < S; ++j)
        for (int k = 0; k < S; ++k) data[i][v][(k + H) + NX * ((j + H) + NX * H)] = value(g[i].uid, v, step, k, j);
      rewind_grids_set_field(grids, at, v, data[i][v]);
    }
    if (how == SLOT_7 && q.uid == 1) rewind_grids_set_field(grids, at, 7, data[i][0]);
  }
}

static void misuse_scalars(rewind_file* f, rewind_grids* grids) {
  const int last = size - 1;
  describe(grids, 2, GOOD);
  const double t = rank == 1 ? nextafter(0.1, 1.0) : 0.1;
  refused(rewind_file_write(f, 2, t, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0), REWIND_ERR_ARGUMENT,
          "time one ulp apart on rank 1: refused on every rank, naming rank 1 and time", "rank 1", "time");
  refused(rewind_file_write(f, 2, 0.1, 0.1, rank == 0 ? REWIND_CHECKPOINT : REWIND_VISUALISATION, grids, 0, NULL, 0),
          REWIND_ERR_ARGUMENT, "kind checkpoint on rank 0, visualisation elsewhere: refused", "kind", NULL);
  refused(rewind_file_write(f, rank == 1 ? 3 : 2, 0.1, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0), REWIND_ERR_ARGUMENT,
          "step 3 on rank 1, 2 elsewhere: refused", "step", NULL);
  const int vars[1] = {rank == 0 ? 0 : 1};
  refused(rewind_file_write(f, 2, 0.1, 0.1, REWIND_VISUALISATION, grids, 1, vars, 0), REWIND_ERR_ARGUMENT,
          "vars {0} on rank 0, {1} elsewhere: refused", "vars", NULL);
  char on_last[32];
  snprintf(on_last, sizeof on_last, "rank %d", last);
  refused(rewind_file_write(f, 2, rank == last ? NAN : 0.1, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0),
          REWIND_ERR_ARGUMENT, "a NaN time on the last rank only: refused on every rank, naming it", on_last, "nan");
  refused(rewind_file_write(f, 2, INFINITY, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0), REWIND_ERR_ARGUMENT,
          "an infinite time: refused", "not a finite number", NULL);
  refused(rewind_file_write(f, 2, 0.1, NAN, REWIND_CHECKPOINT, grids, 0, NULL, 0), REWIND_ERR_ARGUMENT,
          "a NaN dt: refused", "dt", NULL);
  int rc = rank == 0 ? rewind_file_close(f) : rewind_file_write(f, 2, 0.1, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0);
  refused(rc, REWIND_ERR_ARGUMENT, "rank 0 closes while the others write: both refused, the file stays open",
          "different calls", NULL);
}

static void misuse_tree(rewind_file* f, rewind_grids* grids) {
  const struct {
    int how;
    const char *what, *word;
  } bad[] = {
      {OUTSIDE_PARENT, "a grid's box outside its parent (which has arrays): refused", "not inside its parent"},
      {WRONG_SIZE, "a box of the wrong size for its level: refused", "wide"},
      {TWO_LEVELS, "a child two levels below its parent: refused", "one level below"},
      {SAME_UID, "one uid on two ranks: refused", "described twice"},
      {SLOT_7, "rewind_grids_set_field slot 7 of 2 variables: the write is refused", "slot 7"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    describe(grids, 3, bad[i].how);
    refused(rewind_file_write(f, 3, 0.2, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0), REWIND_ERR_ARGUMENT, bad[i].what,
            bad[i].word, NULL);
  }
}

static void misuse_branch(const char* path) {
  char branch[4096], registry[4096];
  snprintf(branch, sizeof branch, "%s.branch.h5", path);
  snprintf(registry, sizeof registry, "%s.branches", path);
  rewind_file* b = NULL;
  refused(rewind_file_create_branch(&b, MPI_COMM_WORLD, branch, path, 3, 0, NULL, NULL), REWIND_ERR_ARGUMENT,
          "a branch of visualisation step 3: refused", "visualisation", NULL);
  check(b == NULL && access(branch, F_OK) != 0 && access(registry, F_OK) != 0,
        "... nothing created: no branch file, no registry entry");
  char mine[4096];
  snprintf(mine, sizeof mine, "%s.branch%d.h5", path, rank == 1 ? 1 : 0);
  refused(rewind_file_create_branch(&b, MPI_COMM_WORLD, mine, path, 2, 0, NULL, NULL), REWIND_ERR_ARGUMENT,
          "a branch path that differs on rank 1: refused", "path", NULL);
  check(b == NULL && access(mine, F_OK) != 0 && access(registry, F_OK) != 0, "... nothing created");
}

static void misuse_reader(const char* path) {
  rewind_reader* r = NULL;
  check(rewind_reader_open(&r, MPI_COMM_WORLD, path) == REWIND_OK, "rewind_reader_open (collective)");
  double buf[S * S];
  int64_t row = rank;
  refused(rewind_reader_read(r, rank == 1 ? 1 : 2, "T", 1, &row, buf), REWIND_ERR_ARGUMENT,
          "a collective read of step 1 on rank 1, step 2 elsewhere: refused", "step", NULL);
  check(rewind_reader_read(r, 2, "T", 1, &row, buf) == REWIND_OK, "... then the same read with one step works");
  check(rewind_reader_close(r) == REWIND_OK, "rewind_reader_close");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* path = argc > 1 ? argv[1] : "misuse.h5";
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "capi_misuse: run on 2 or more ranks\n");
    MPI_Finalize();
    return 2;
  }
  make_tree();
  rewind_config* cfg = NULL;
  const int cells[3] = {S, S, 1};
  const double domain[6] = {0, 1, 0, 1, 0, 1};
  rewind_config_create(&cfg);
  rewind_config_set_geometry(cfg, 2, cells, 2, domain);
  rewind_config_add_variable(cfg, "T", "K");
  rewind_config_add_variable(cfg, "u", "m/s");
  rewind_grids* grids = NULL;
  rewind_grids_create(&grids, H);

  rewind_file* f = NULL;
  check(rewind_file_create(&f, MPI_COMM_WORLD, path, cfg) == REWIND_OK, "rewind_file_create");
  describe(grids, 1, GOOD);
  check(rewind_file_write(f, 1, 0.0, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK, "step 1 (t = 0)");
  misuse_scalars(f, grids);
  describe(grids, 2, GOOD);
  check(rewind_file_write(f, 2, 0.1, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK,
        "step 2 (t = 0.1) after the refused calls");
  refused(rewind_file_write(f, 3, 0.05, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0), REWIND_ERR_ARGUMENT,
          "time going back (0.05 after 0.1): refused", "before", NULL);
  misuse_tree(f, grids);
  describe(grids, 3, GOOD);
  const int t_only[1] = {0};
  check(rewind_file_write(f, 3, 0.2, 0.1, REWIND_VISUALISATION, grids, 1, t_only, 1) == REWIND_OK,
        "step 3 (t = 0.2): float32 T, the tree good again");

  rewind_event e;
  int has = 1;
  check(rewind_live_next_event(NULL, &e, &has) == REWIND_ERR_ARGUMENT && has == 0,
        "rewind_live_next_event on an error: a status, has_event 0 (the documented loop ends)");
  check(rewind_file_close(f) == REWIND_OK, "rewind_file_close");
  misuse_branch(path);
  misuse_reader(path);
  rewind_grids_free(grids);
  rewind_config_free(cfg);
  return finish();
}
