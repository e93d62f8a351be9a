/* The C API end to end, in plain C99 as an outside code would write it: an adaptive
 * quadtree of 8 x 8-cell grids (root, its 4 children, the first of them refined again)
 * spread round-robin over the ranks, leaves with arrays and parents without (the
 * library averages them), a checkpoint and a float32 visualisation step, a restart read
 * on this rank count (each rank its partition of the rows, checked value by value
 * against the function the leaves were filled with), a branch with its lineage, the
 * same steps from float32 arrays (OUT.h5.float.h5), and the errors a caller meets (one
 * status and one message each).
 *   mpiexec -n P capi_roundtrip OUT.h5      (exit 0: every check held) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "rewind/rewind.h"

#define S 8 /* cells per grid and axis */
#define H 1 /* halo */
#define NX (S + 2 * H)
#define N (NX * NX * (1 + 2 * H)) /* ghost layers on every side, z too (rewind.h) */


static double field(double x, double y, int var) { return var == 0 ? sin(3.0 * x) * cos(2.0 * y) : x * x - y; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* path = argc > 1 ? argv[1] : "capi.h5";

  /* The tree: uid = level << 58 | index, 9 grids on 3 levels. */
  grid g[9];
  int n = 0;
  g[n++] = (grid){0, UINT64_MAX, 0, 4, {1ull << 58, (1ull << 58) | 1, (1ull << 58) | 2, (1ull << 58) | 3}, {0, 1, 0, 1, 0, 1}};
  for (int c = 0; c < 4; ++c) {
    double x = 0.5 * (c & 1), y = 0.5 * (c >> 1);
    grid q = {(1ull << 58) | (unsigned)c, 0, 1, 0, {0}, {x, x + 0.5, y, y + 0.5, 0, 1}};
    if (c == 0) {
      q.n_children = 4;
      for (int d = 0; d < 4; ++d) q.children[d] = (2ull << 58) | (unsigned)d;
    }
    g[n++] = q;
  }
  for (int d = 0; d < 4; ++d) {
    double x = 0.25 * (d & 1), y = 0.25 * (d >> 1);
    g[n++] = (grid){(2ull << 58) | (unsigned)d, 1ull << 58, 2, 0, {0}, {x, x + 0.25, y, y + 0.25, 0, 1}};
  }
  /* Leaves of this rank get arrays (two variables, halo 1). */
  static double data[9][2][N];
  int64_t index[9];
  rewind_grids* grids = NULL;
  check(rewind_grids_create(&grids, H) == REWIND_OK, "rewind_grids_create");
  for (int i = 0; i < n; ++i) {
    if (i % size != rank) continue;
    int64_t at = -1;
    rewind_grids_add(grids, g[i].uid, g[i].level, g[i].uid, g[i].bbox, g[i].parent, g[i].n_children, g[i].children, &at);
    index[i] = at;
    if (g[i].n_children > 0) continue; /* a parent: averaged by the library */
    double h = (g[i].bbox[1] - g[i].bbox[0]) / S;
    for (int v = 0; v < 2; ++v) {
      for (int j = 0; j < S; ++j)
        for (int k = 0; k < S; ++k)
          data[i][v][(k + H) + NX * ((j + H) + NX * H)] = field(g[i].bbox[0] + (k + 0.5) * h, g[i].bbox[2] + (j + 0.5) * h, v);
      rewind_grids_set_field(grids, at, v, data[i][v]);
    }
  }

  rewind_config* cfg = NULL;
  const int cells[3] = {S, S, 1};
  const double domain[6] = {0, 1, 0, 1, 0, 1};
  check(rewind_config_create(&cfg) == REWIND_OK, "rewind_config_create");
  check(rewind_config_set_geometry(cfg, 2, cells, 2, domain) == REWIND_OK, "set_geometry");
  check(rewind_config_add_variable(cfg, "phi", "1") == REWIND_OK && rewind_config_add_variable(cfg, "psi", "m") == REWIND_OK,
        "two variables");
  check(rewind_config_set_option(cfg, "strategy", "collective") == REWIND_OK, "an [output.io] option by name");
  check(rewind_config_set_option(cfg, "strategy", "fastest") == REWIND_ERR_ARGUMENT && strstr(rewind_last_error(), "strategy"),
        "a bad option value: REWIND_ERR_ARGUMENT naming the option");
  check(rewind_config_set_option(cfg, "no_such_option", "1") == REWIND_ERR_ARGUMENT, "an unknown option is refused");
  rewind_config_set_text(cfg, "creator", "capi_roundtrip.c");

  rewind_file* f = NULL;
  check(rewind_file_create(&f, MPI_COMM_WORLD, path, cfg) == REWIND_OK, "rewind_file_create");
  check(rewind_file_write(f, 1, 0.5, 0.5, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK, "a checkpoint, parents averaged");
  const int vis[1] = {1};
  check(rewind_file_write(f, 2, 1.0, 0.5, REWIND_VISUALISATION, grids, 1, vis, 1) == REWIND_OK, "a float32 visualisation step of psi");
  check(rewind_file_write(f, 2, 1.5, 0.5, REWIND_CHECKPOINT, grids, 0, NULL, 0) != REWIND_OK, "a step number not after the last is refused");
  int64_t last = -7;
  check(rewind_file_last_step(f, &last) == REWIND_OK && last == 2, "last committed step 2 (through a pointer, API 3)");
  check(rewind_file_close(f) == REWIND_OK, "close");
  rewind_file* again = NULL;
  check(rewind_file_create(&again, MPI_COMM_WORLD, path, cfg) == REWIND_ERR_EXISTS && again == NULL,
        "creating an existing file: REWIND_ERR_EXISTS, nothing touched");

  /* Restart read: this rank's partition of the rows of the checkpoint. */
  rewind_reader* r = NULL;
  check(rewind_reader_open(&r, MPI_COMM_WORLD, path) == REWIND_OK, "rewind_reader_open (collective)");
  rewind_step_entry e;
  check(rewind_reader_find_step(r, "#0", &e) == REWIND_OK && e.step == 1 && e.kind == REWIND_CHECKPOINT, "find_step #0");
  check(rewind_reader_find_step(r, "t=99", &e) == REWIND_ERR_NO_SUCH_STEP && strstr(rewind_last_error(), "not been reached"),
        "t=99 (not reached): REWIND_ERR_NO_SUCH_STEP");
  rewind_reader_find_step(r, "1", &e);
  rewind_topology t;
  check(rewind_reader_topology(r, e.step, &t) == REWIND_OK && t.n_grids == 9 && t.n_levels == 3, "topology: 9 grids on 3 levels");
  int64_t nrows = 0;
  const int64_t* rows = NULL;
  check(rewind_reader_partition(r, e.step, rank, size, &nrows, &rows) == REWIND_OK, "partition");
  double* buf = malloc(sizeof(double) * (size_t)(nrows > 0 ? nrows : 1) * S * S);
  check(rewind_reader_read(r, e.step, "phi", nrows, rows, buf) == REWIND_OK, "read phi of my rows");
  int bad = 0;
  for (int64_t i = 0; i < nrows; ++i) {
    const int64_t row = rows[i];
    const double* b = t.bbox + 6 * row;
    const double h = (b[1] - b[0]) / S;
    int leaf = 1;
    for (int c = 0; c < t.max_children; ++c) leaf &= t.child_rows[row * t.max_children + c] < 0;
    if (!leaf) continue;
    for (int j = 0; j < S; ++j)
      for (int k = 0; k < S; ++k)
        if (buf[i * S * S + j * S + k] != field(b[0] + (k + 0.5) * h, b[2] + (j + 0.5) * h, 0)) bad++;
  }
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(all_bad == 0, "every leaf value read back bit for bit");
  free(buf);
  check(rewind_reader_read(r, 2, "phi", 0, NULL, NULL) != REWIND_OK && strstr(rewind_last_error(), "phi"),
        "reading a variable the visualisation step lacks: an error naming it");
  rewind_reader_close(r);

  /* A branch of step 1 with a recorded change. */
  char branch[4096];
  snprintf(branch, sizeof branch, "%s.branch.h5", path);
  const char* changes[1] = {"kappa=0.5"};
  rewind_file* b = NULL;
  check(rewind_file_create_branch(&b, MPI_COMM_WORLD, branch, path, 1, 1, changes, NULL) == REWIND_OK, "create_branch");
  check(rewind_file_write(b, 3, 1.0, 0.5, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK, "the branch's first step");
  rewind_file_close(b);
  rewind_reader* rb = NULL;
  const char* parent = NULL;
  int64_t pstep = -1;
  check(rewind_reader_open(&rb, MPI_COMM_NULL, branch) == REWIND_OK &&
            rewind_reader_lineage(rb, &parent, &pstep, NULL) == REWIND_OK && pstep == 1 && strstr(parent, "h5") != NULL,
        "the branch's lineage names its parent and step 1 (serial reader)");
  rewind_reader_close(rb);
  rewind_reader* none = NULL;
  check(rewind_reader_open(&none, MPI_COMM_NULL, "/nonexistent/x.h5") == REWIND_ERR_NOT_FOUND && none == NULL,
        "a missing file: REWIND_ERR_NOT_FOUND");

  /* The same leaves as float32 arrays (rewind_grids_set_field_float) into PATH.float.h5: a
   * checkpoint (stored as double) and a float32 visualisation step of psi; float_oracle.py
   * compares them with this file's steps through h5py. */
  static float fdata[9][2][N];
  for (int i = 0; i < n; ++i)
    if (i % size == rank && g[i].n_children == 0)
      for (int v = 0; v < 2; ++v) {
        for (int c = 0; c < N; ++c) fdata[i][v][c] = (float)data[i][v][c];
        check(rewind_grids_set_field_float(grids, index[i], v, fdata[i][v]) == REWIND_OK, "rewind_grids_set_field_float");
      }
  check(rewind_grids_set_field_float(grids, 99, 0, fdata[0][0]) == REWIND_ERR_ARGUMENT, "set_field_float of no grid: refused");
  char floats[4096];
  snprintf(floats, sizeof floats, "%s.float.h5", path);
  rewind_file* ff = NULL;
  check(rewind_file_create(&ff, MPI_COMM_WORLD, floats, cfg) == REWIND_OK &&
            rewind_file_write(ff, 1, 0.5, 0.5, REWIND_CHECKPOINT, grids, 0, NULL, 0) == REWIND_OK &&
            rewind_file_write(ff, 2, 1.0, 0.5, REWIND_VISUALISATION, grids, 1, vis, 1) == REWIND_OK &&
            rewind_file_close(ff) == REWIND_OK,
        "a checkpoint and a float32 visualisation step from float32 arrays, parents averaged");

  rewind_grids_free(grids);
  rewind_config_free(cfg);
  return finish();
}
