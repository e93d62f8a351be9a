/* What the C API's collective checks cost a durable write (docs/benchmarks.md, "The C
 * API's checks on a durable write, end to end"): a code's checkpoint written through
 * rewind.h with the checks (A: the arguments agreed over the ranks, the tree checked,
 * as every write of a code does) and without them (B: rewind_internal_unchecked_writes,
 * api/src/internal.h), interleaved A B B A, A B B A, ... in one process. Each write is
 * a new file (rewind_file_create + rewind_file_write(REWIND_CHECKPOINT) + _close, the
 * file removed first), so every A write follows a change of the grids for its file and
 * pays the tree check: the worst case. With --steps K each file gets K checkpoints: the
 * later ones, grids unchanged, pay the arguments' agreement alone (a code that does not
 * adapt its tree). The commit's fsync is included (the kernel's
 * default options, views off).
 *
 *   mpiexec -n P rewind_bench_api DIR [--rounds R] [--levels L] [--cells S] [--vars V] [--steps K]
 *
 * Tree: a full octree of L + 1 levels (default 3: 585 grids), S^3 cells per grid (default
 * 16), V variables (default 4): 77 MB a step, small enough that the checks weigh more
 * than on bench/kernel's 1.14 GiB step. Every grid, parents too, has its arrays. Rank
 * 0 prints each round's times, A / B and the time the A write spent in its checks
 * (rewind_internal_check_seconds), then the medians: of the per-round A / B (end to
 * end, as noisy as the machine's durable writes) and of the checks' share of each A
 * write (measured inside the same write, so the disk's noise does not enter it; a
 * barrier before every write, A and B alike, keeps a rank late from the create out of
 * the checks' first reduction). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rewind/rewind.h"

static int rank = 0, nranks = 1, steps = 1; /* steps: checkpoints per file (--steps) */

static void need(rewind_status rc, const char* what) {
  if (rc == REWIND_OK) return;
  fprintf(stderr, "rewind_bench_api: %s: %s\n", what, rewind_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The uid of grid i (Morton index) of level l. */
static uint64_t uid_of(int l, uint64_t i) { return ((uint64_t)l << 58) | i; }

/* This rank's grids: a contiguous share of each level along the curve. */
static void describe(rewind_grids* grids, int levels, int vars, double** arrays) {
  int64_t k = 0;
  for (int l = 0; l <= levels; ++l) {
    const uint64_t n = (uint64_t)1 << (3 * l), lo = n * (uint64_t)rank / (uint64_t)nranks,
                   hi = n * (uint64_t)(rank + 1) / (uint64_t)nranks;
    const double h = 1.0 / (double)(1 << l);
    for (uint64_t i = lo; i < hi; ++i) {
      unsigned x = 0, y = 0, z = 0;
      for (int b = 0; b < l; ++b) {
        x |= (unsigned)((i >> (3 * b)) & 1) << b;
        y |= (unsigned)((i >> (3 * b + 1)) & 1) << b;
        z |= (unsigned)((i >> (3 * b + 2)) & 1) << b;
      }
      const double box[6] = {x * h, (x + 1) * h, y * h, (y + 1) * h, z * h, (z + 1) * h};
      uint64_t children[8];
      for (int c = 0; c < 8; ++c) children[c] = uid_of(l + 1, 8 * i + (uint64_t)c);
      int64_t at = -1;
      need(rewind_grids_add(grids, uid_of(l, i), l, i, box, l == 0 ? UINT64_MAX : uid_of(l - 1, i / 8),
                            l < levels ? 8 : 0, children, &at),
           "rewind_grids_add");
      for (int v = 0; v < vars; ++v) need(rewind_grids_set_field(grids, at, v, arrays[k * vars + v]), "set_field");
      ++k;
    }
  }
}

static double max_over_ranks(double t) {
  double all = 0;
  MPI_Allreduce(&t, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

/* One durable write of `steps` checkpoints into a new file, with or without the checks: its
 * time, max over ranks; *checks, the time its checks took (rewind_internal_check_seconds
 * summed over the steps, max over ranks). */
static double write_once(const char* path, rewind_config* cfg, rewind_grids* grids, int checked, double* checks) {
  double in_checks = 0;
  if (rank == 0) unlink(path);
  rewind_internal_unchecked_writes(!checked);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  rewind_file* f = NULL;
  need(rewind_file_create(&f, MPI_COMM_WORLD, path, cfg), "rewind_file_create");
  MPI_Barrier(MPI_COMM_WORLD); /* the write starts together: its first collective waits for no late rank */
  for (int s = 1; s <= steps; ++s) {
    need(rewind_file_write(f, s, 0.1 * s, 0.1, REWIND_CHECKPOINT, grids, 0, NULL, 0), "rewind_file_write");
    in_checks += rewind_internal_check_seconds();
  }
  need(rewind_file_close(f), "rewind_file_close");
  const double t = max_over_ranks(MPI_Wtime() - t0);
  *checks = max_over_ranks(in_checks);
  rewind_internal_unchecked_writes(0);
  return t;
}

/* The rounds, A B in even rounds and B A in odd ones, then the medians: of the per-round
 * ratios A / B (end to end: the checks' cost and the machine's noise), and of the
 * share of each A write its checks took (the checks' own cost, the same writes). */
static void rounds_abba(const char* path, rewind_config* cfg, rewind_grids* grids, int rounds) {
  double unused = 0;
  write_once(path, cfg, grids, 1, &unused); /* warm-up, untimed */
  double* ratio = malloc(sizeof(double) * (size_t)rounds);
  double* share = malloc(sizeof(double) * (size_t)rounds);
  double* ta = malloc(sizeof(double) * (size_t)rounds);
  double* tb = malloc(sizeof(double) * (size_t)rounds);
  double* tc = malloc(sizeof(double) * (size_t)rounds);
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) ta[r] = write_once(path, cfg, grids, 1, &tc[r]);
    tb[r] = write_once(path, cfg, grids, 0, &unused);
    if (r % 2 == 1) ta[r] = write_once(path, cfg, grids, 1, &tc[r]);
    ratio[r] = ta[r] / tb[r];
    share[r] = tc[r] / ta[r];
    if (rank == 0)
      printf("round %2d  A (checked) %.4f s  B (unchecked) %.4f s  A / B %.4f  checks %.3f ms = %.4f %% of A\n", r, ta[r],
             tb[r], ratio[r], tc[r] * 1e3, share[r] * 100);
  }
  const double mr = median(ratio, rounds), ms = median(share, rounds), mc = median(tc, rounds);
  const double ma = median(ta, rounds), mb = median(tb, rounds);
  if (rank == 0) {
    printf("median A %.4f s, median B %.4f s; per-round A / B: median %.4f (min %.4f, max %.4f)\n", ma, mb, mr, ratio[0],
           ratio[rounds - 1]);
    printf("the checks inside A: median %.3f ms, median share %.4f %% (min %.4f, max %.4f) of a durable write "
           "(goal <= 1 %%)\n", mc * 1e3, ms * 100, share[0] * 100, share[rounds - 1] * 100);
  }
  free(ratio), free(share), free(ta), free(tb), free(tc);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int rounds = 12, levels = 3, cells = 16, vars = 4;
  const char* dir = NULL;
  for (int a = 1; a < argc; ++a) {
    if (a + 1 < argc && strcmp(argv[a], "--rounds") == 0) rounds = atoi(argv[++a]);
    else if (a + 1 < argc && strcmp(argv[a], "--levels") == 0) levels = atoi(argv[++a]);
    else if (a + 1 < argc && strcmp(argv[a], "--cells") == 0) cells = atoi(argv[++a]);
    else if (a + 1 < argc && strcmp(argv[a], "--vars") == 0) vars = atoi(argv[++a]);
    else if (a + 1 < argc && strcmp(argv[a], "--steps") == 0) steps = atoi(argv[++a]);
    else if (argv[a][0] != '-' && dir == NULL) dir = argv[a];
    else dir = NULL, a = argc;
  }
  if (dir == NULL || rounds < 1 || levels < 0 || levels > 5 || cells < 1 || vars < 1 || steps < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: mpiexec -n P rewind_bench_api DIR [--rounds R>=1] [--levels 0..5] [--cells S] [--vars V] "
                      "[--steps K>=1]\n");
    MPI_Finalize();
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/bench_api.h5", dir);
  rewind_config* cfg = NULL;
  need(rewind_config_create(&cfg), "rewind_config_create");
  const int c3[3] = {cells, cells, cells};
  const double domain[6] = {0, 1, 0, 1, 0, 1};
  need(rewind_config_set_geometry(cfg, 3, c3, 2, domain), "set_geometry");
  for (int v = 0; v < vars; ++v) {
    char name[16];
    snprintf(name, sizeof name, "v%d", v);
    need(rewind_config_add_variable(cfg, name, ""), "add_variable");
  }
  need(rewind_config_set_option(cfg, "write_views", "false"), "set_option");
  int64_t total = 0, mine = 0; /* grids of the whole tree, and of this rank (describe's share) */
  for (int l = 0; l <= levels; ++l) {
    const int64_t m = (int64_t)1 << (3 * l);
    total += m;
    mine += m * (rank + 1) / nranks - m * rank / nranks;
  }
  const size_t n = (size_t)cells * cells * cells;
  double** arrays = malloc(sizeof(double*) * (size_t)(mine * vars));
  for (int64_t i = 0; i < mine * vars; ++i) {
    arrays[i] = malloc(n * sizeof(double));
    for (size_t c = 0; c < n; ++c) arrays[i][c] = sin((double)(i * 7 + (int64_t)c));
  }
  rewind_grids* grids = NULL;
  need(rewind_grids_create(&grids, 0), "rewind_grids_create");
  describe(grids, levels, vars, arrays);
  if (rank == 0)
    printf("rewind_bench_api: %d ranks, %lld grids of %d^3 cells, %d variables: %.1f MB a step, %d a file; %d rounds "
           "A B B A\n", nranks, (long long)total, cells, vars, (double)total * (double)n * vars * 8 / 1e6, steps, rounds);
  rounds_abba(path, cfg, grids, rounds);
  if (rank == 0) unlink(path);
  rewind_grids_free(grids);
  rewind_config_free(cfg);
  for (int64_t i = 0; i < mine * vars; ++i) free(arrays[i]);
  free(arrays);
  MPI_Finalize();
  return 0;
}
