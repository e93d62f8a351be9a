/* Per-step named scalars through the C API (rewind_file_set_scalar), as a code records
 * its monitors: a 2-D quadtree (root + 4 children, round robin over the ranks) written
 * on every rank of MPI_COMM_WORLD with
 *   step 1: drag = 0.1 + 0.2 (not a short decimal: every bit must survive), energy = -1.5e300
 *   step 2: none
 *   step 3: drag set to 1.0, then to 2.5 (the last value counts, first-set order kept), residual = 1e-12
 *   (a write with drag 0.5 on rank 0 and its neighbour on the others: refused on every rank)
 *   step 5: lift = 0.25 only (every write, refused or not, starts a new list)
 * and a bad name and a non-finite value refused at once. tests/api/scalars_oracle.py
 * checks the file with h5py, `rewind info --json` and Python's Step.scalars against it.
 *   mpiexec -n P capi_scalars OUT.h5     (exit 0: every check held) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "capi_check.h"
#include "rewind/rewind.h"

#define S 4
#define N (S * S)

static grid g[5];
static double data[5][N];

static void describe(rewind_grids* grids) {
  g[0] = (grid){1, UINT64_MAX, 0, 4, {10, 11, 12, 13}, {0, 1, 0, 1, 0, 1}};
  for (int c = 0; c < 4; ++c) {
    const double x = 0.5 * (c & 1), y = 0.5 * (c >> 1);
    g[1 + c] = (grid){10 + (uint64_t)c, 1, 1, 0, {0}, {x, x + 0.5, y, y + 0.5, 0, 1}};
  }
  for (int i = 0; i < 5; ++i) {
    if (i % size != rank) continue;
    int64_t at = -1;
    rewind_grids_add(grids, g[i].uid, g[i].level, g[i].uid, g[i].bbox, g[i].parent, g[i].n_children, g[i].children,
                     &at);
    for (int k = 0; k < N; ++k) data[i][k] = (double)g[i].uid + k / 16.0;
    rewind_grids_set_field(grids, at, 0, data[i]);
  }
}

static int same_everywhere(int rc) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* path = argc > 1 ? argv[1] : "scalars.h5";
  rewind_config* cfg = NULL;
  rewind_config_create(&cfg);
  const int cells[3] = {S, S, 1};
  const double domain[6] = {0, 1, 0, 1, 0, 1};
  rewind_config_set_geometry(cfg, 2, cells, 2, domain);
  rewind_config_add_variable(cfg, "T", "K");
  rewind_grids* grids = NULL;
  rewind_grids_create(&grids, 0);
  describe(grids);
  rewind_file* f = NULL;
  check(rewind_file_create(&f, MPI_COMM_WORLD, path, cfg) == REWIND_OK, "rewind_file_create");

  check(rewind_file_set_scalar(f, "drag", 0.1 + 0.2) == REWIND_OK, "set_scalar drag");
  check(rewind_file_set_scalar(f, "energy", -1.5e300) == REWIND_OK, "set_scalar energy");
  check(rewind_file_write(f, 1, 0.0, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK, "step 1 with two scalars");
  check(rewind_file_write(f, 2, 0.1, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK, "step 2 with none");
  rewind_file_set_scalar(f, "drag", 1.0);
  rewind_file_set_scalar(f, "residual", 1e-12);
  check(rewind_file_set_scalar(f, "drag", 2.5) == REWIND_OK, "drag set again: replaced");
  check(rewind_file_set_scalar(f, "bad name", 1.0) == REWIND_ERR_ARGUMENT && strstr(rewind_last_error(), "bad name"),
        "a name with a space: REWIND_ERR_ARGUMENT naming it");
  check(rewind_file_set_scalar(f, "drag", NAN) == REWIND_ERR_ARGUMENT && strstr(rewind_last_error(), "finite"),
        "a NaN value: REWIND_ERR_ARGUMENT");
  check(rewind_file_write(f, 3, 0.2, 0.1, REWIND_VISUALISATION, grids, 0, NULL, 1) == REWIND_OK,
        "step 3 (float32 visualisation) with drag and residual");

  rewind_file_set_scalar(f, "drag", rank == 0 ? 0.5 : nextafter(0.5, 1.0));
  const int rc = rewind_file_write(f, 4, 0.3, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0);
  if (rank == 0 && rc != REWIND_OK) printf("refused: %s\n", rewind_last_error());
  check(size == 1 || (rc == REWIND_ERR_ARGUMENT && same_everywhere(rc) && strstr(rewind_last_error(), "scalar values") &&
                      strchr(rewind_last_error(), '\n') == NULL),
        "drag one ulp apart on the other ranks: refused on every rank, one line naming the scalar values");
  if (size == 1) check(rc == REWIND_OK, "(one rank: nothing differs, step 4 written)");
  rewind_file_set_scalar(f, "lift", 0.25);
  check(rewind_file_write(f, 5, 0.4, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK,
        "step 5: lift alone (the refused write's list is gone)");
  check(rewind_file_close(f) == REWIND_OK, "close");

  rewind_reader* r = NULL;
  check(rewind_reader_open(&r, MPI_COMM_NULL, path) == REWIND_OK, "rewind_reader_open");
  int n = -1;
  const char* name = NULL;
  double v = 0;
  check(rewind_reader_scalar_count(r, 1, &n) == REWIND_OK && n == 2, "the reader: step 1 holds 2 scalars");
  check(rewind_reader_scalar(r, 1, 0, &name, &v) == REWIND_OK && strcmp(name, "drag") == 0 && v == 0.1 + 0.2,
        "... the first drag, bit for bit");
  check(rewind_reader_scalar_count(r, 2, &n) == REWIND_OK && n == 0, "... step 2 none");
  check(rewind_reader_scalar(r, 3, 2, &name, &v) == REWIND_ERR_ARGUMENT, "... scalar 2 of step 3's two: refused");
  check(rewind_reader_scalar_count(r, 4, &n) == (size == 1 ? REWIND_OK : REWIND_ERR_NO_SUCH_STEP),
        "... step 4 (refused) is no step");
  rewind_reader_close(r);
  rewind_grids_free(grids);
  rewind_config_free(cfg);
  return finish();
}
