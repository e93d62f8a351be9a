/* heat.c — a small 2-D heat solver on its own adaptive quadtree, adopting Rewind through
 * its C API: output (checkpoints and visualisation steps in one shared HDF5 file),
 * restart on any number of ranks, live windows, steering of its parameters, branches
 * inside the running job and forks into several futures at once (each on a group of the
 * ranks: its leaves re-partitioned onto the BRANCH event's communicator, distribute()).
 * Written the way an outside code would: its own tree, its own
 * arrays, its own partition; the lines that talk to Rewind are marked "/ * R * /".
 *
 *   dT/dt = kappa lap T + q exp(-|x - c|^2 / w^2),   T = 0 on the boundary of [0,1]^2
 *
 * The tree: 16 x 16-cell blocks, refined to level 3 near the hot spot c = (0.5, 0.5),
 * level 2 around it, level 1 far from it (fixed: the refinement follows the source);
 * --refine K adds K levels everywhere (K = 4: 2164 leaves, 553 984 cells). Leaves carry T; their
 * parents are given to Rewind without arrays (it stores their averages). Each block's
 * ghost cells take the value of the leaf cell that contains their centre (a level jump:
 * piecewise constant), found from every leaf's interior gathered on every rank — fine for
 * an example of this size, and independent of the number of ranks, so runs and restarts
 * on any rank count are bit-identical.
 *
 *   mpirun -n P heat OUT.h5 STEPS [--restart FILE@SEL] [--listen HOST:PORT] [--vis N] [--cp N]
 *                  [--refine K] [--progress 1] [--kappa K]
 * --kappa K: the diffusivity (0.01), recorded as the change of a branch (--restart).
 * --progress 1: rank 0 prints "step N" after every step (a step clock for bench/live).
 * --restart FILE@SEL takes the checkpoint `rewind run --restart FILE@SEL` takes (SEL:
 * latest, the default, = the last checkpoint; t=T the last one at or before T; N; #i):
 * from FILE's last checkpoint the run continues in FILE (OUT unused); from an earlier one
 * it branches into OUT.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rewind/rewind.h>

#define S 16                                        /* cells per block and axis */
#define NX (S + 2)                                  /* with one ghost layer */
#define AT(i, j) ((i) + 1 + NX * ((j) + 1 + NX))    /* middle of three z layers (Rewind's 2-D layout) */
#define PADDED (NX * NX * 3)
#define MAXB 4096                                   /* blocks: --refine up to 4 */

typedef struct {
  uint64_t uid, parent, child[4];
  int level, ix, iy, nchild, owner, kid[4]; /* kid: the children's indices in blk */
  double x0, y0, size; /* lower corner, edge */
  double* T;           /* leaves of this rank only */
} Block;

static Block blk[MAXB];
static int nb = 0, rank = 0, nranks = 1;
static MPI_Comm comm; /* the ranks that compute (all of them, unless the collector takes one) */
static double kappa = 0.01, q = 5.0;
static int refine = 0;

static uint64_t morton(int x, int y) {
  uint64_t m = 0;
  for (int b = 0; b < 19; ++b) m |= (uint64_t)((x >> b) & 1) << (2 * b) | (uint64_t)((y >> b) & 1) << (2 * b + 1);
  return m;
}

static int build(int level, int ix, int iy, int parent) {
  Block* b = &blk[nb];
  const int me = nb++;
  b->level = level, b->ix = ix, b->iy = iy, b->size = 1.0 / (1 << level);
  b->x0 = ix * b->size, b->y0 = iy * b->size;
  b->uid = (uint64_t)level << 58 | morton(ix, iy);
  b->parent = parent < 0 ? UINT64_MAX : blk[parent].uid;
  const double dx = fmax(fabs(b->x0 + b->size / 2 - 0.5) - b->size / 2, 0.0);
  const double dy = fmax(fabs(b->y0 + b->size / 2 - 0.5) - b->size / 2, 0.0);
  const double d = sqrt(dx * dx + dy * dy); /* from the hot spot to the block */
  const int depth = (d < 0.1 ? 3 : d < 0.25 ? 2 : 1) + refine;
  b->nchild = level < depth ? 4 : 0;
  if (b->nchild > 0 && nb + 4 > MAXB) {
    fprintf(stderr, "heat: more than %d blocks (--refine %d is too deep)\n", MAXB, refine);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int c = 0; c < b->nchild; ++c) {
    const int k = build(level + 1, 2 * ix + (c & 1), 2 * iy + (c >> 1), me);
    blk[me].child[c] = blk[k].uid, blk[me].kid[c] = k;
  }
  return me;
}

/* The leaf cell containing (x, y), from the gathered interiors `all` (leaf order). */
static double sample(const double* all, const int* leaf_index, double x, double y, double ghost_of) {
  if (x < 0 || x > 1 || y < 0 || y > 1) return -ghost_of; /* T = 0 on the boundary */
  int b = 0;
  while (blk[b].nchild > 0) {
    const int c = (x >= blk[b].x0 + blk[b].size / 2) + 2 * (y >= blk[b].y0 + blk[b].size / 2);
    b = blk[b].kid[c];
  }
  const int i = (int)((x - blk[b].x0) / blk[b].size * S), j = (int)((y - blk[b].y0) / blk[b].size * S);
  return all[(size_t)leaf_index[b] * S * S + (j < S ? j : S - 1) * S + (i < S ? i : S - 1)];
}

static void step(double dt, double* all, int* leaf_index, int nleaves) {
  /* Every leaf's interior on every rank (in leaf order), then ghosts, then Euler. */
  int* counts = calloc(nranks, sizeof(int)), *displ = calloc(nranks, sizeof(int));
  double* mine = malloc(sizeof(double) * S * S * MAXB);
  int n = 0;
  for (int b = 0; b < nb; ++b)
    if (blk[b].nchild == 0 && blk[b].owner == rank)
      for (int j = 0; j < S; ++j)
        for (int i = 0; i < S; ++i) mine[n++] = blk[b].T[AT(i, j)];
  for (int b = 0; b < nb; ++b)
    if (blk[b].nchild == 0) counts[blk[b].owner] += S * S;
  for (int r = 1; r < nranks; ++r) displ[r] = displ[r - 1] + counts[r - 1];
  MPI_Allgatherv(mine, n, MPI_DOUBLE, all, counts, displ, MPI_DOUBLE, comm);
  (void)nleaves;
  for (int b = 0; b < nb; ++b) {
    if (blk[b].nchild != 0 || blk[b].owner != rank) continue;
    Block* k = &blk[b];
    const double h = k->size / S;
    for (int t = -1; t <= S; ++t) { /* the four ghost rows */
      k->T[AT(-1, t)] = sample(all, leaf_index, k->x0 - h / 2, k->y0 + (t + 0.5) * h, k->T[AT(0, t < 0 ? 0 : t >= S ? S - 1 : t)]);
      k->T[AT(S, t)] = sample(all, leaf_index, k->x0 + k->size + h / 2, k->y0 + (t + 0.5) * h, k->T[AT(S - 1, t < 0 ? 0 : t >= S ? S - 1 : t)]);
      k->T[AT(t, -1)] = sample(all, leaf_index, k->x0 + (t + 0.5) * h, k->y0 - h / 2, k->T[AT(t < 0 ? 0 : t >= S ? S - 1 : t, 0)]);
      k->T[AT(t, S)] = sample(all, leaf_index, k->x0 + (t + 0.5) * h, k->y0 + k->size + h / 2, k->T[AT(t < 0 ? 0 : t >= S ? S - 1 : t, S - 1)]);
    }
    double next[S * S];
    for (int j = 0; j < S; ++j)
      for (int i = 0; i < S; ++i) {
        const double x = k->x0 + (i + 0.5) * h - 0.5, y = k->y0 + (j + 0.5) * h - 0.5;
        const double lap = (k->T[AT(i + 1, j)] + k->T[AT(i - 1, j)] + k->T[AT(i, j + 1)] + k->T[AT(i, j - 1)] - 4 * k->T[AT(i, j)]) / (h * h);
        next[j * S + i] = k->T[AT(i, j)] + dt * (kappa * lap + q * exp(-(x * x + y * y) / 0.01));
      }
    for (int j = 0; j < S; ++j)
      for (int i = 0; i < S; ++i) k->T[AT(i, j)] = next[j * S + i];
  }
  free(counts), free(displ), free(mine);
}

/* The partition over `comm`: leaves in uid order, a contiguous share each; parents with
 * their first child; this rank's blocks described to Rewind (*grids made anew). Again
 * after a fork, onto the ranks of this rank's future (its event's communicator). */
static void distribute(rewind_grids** grids, int leaves) {
  if (leaves < 1) return; /* the tree has leaves: build() made them */
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int seen = 0;
  for (int b = 0; b < nb; ++b)
    if (blk[b].nchild == 0) blk[b].owner = (int)((long)seen++ * nranks / leaves);
  for (int b = nb - 1; b >= 0; --b)
    if (blk[b].nchild > 0) blk[b].owner = blk[blk[b].kid[0]].owner;
  if (*grids) rewind_grids_free(*grids); /*R*/
  rewind_grids_create(grids, 1);         /*R*/
  for (int b = 0; b < nb; ++b) {
    if (blk[b].owner != rank) { /* another rank's now (its values come with the reload) */
      free(blk[b].T);
      blk[b].T = NULL;
      continue;
    }
    const double box[6] = {blk[b].x0, blk[b].x0 + blk[b].size, blk[b].y0, blk[b].y0 + blk[b].size, 0, 1};
    int64_t i;                                                                                           /*R*/
    rewind_grids_add(*grids, blk[b].uid, blk[b].level, morton(blk[b].ix, blk[b].iy), box, blk[b].parent, /*R*/
                     blk[b].nchild, blk[b].child, &i);                                                   /*R*/
    if (blk[b].nchild == 0) {
      if (!blk[b].T) blk[b].T = calloc(PADDED, sizeof(double));
      rewind_grids_set_field(*grids, i, 0, blk[b].T); /* a parent: no array, Rewind averages */ /*R*/
    }
  }
}

/* Reloads T of this rank's leaves from the checkpoint FILE@SEL names (a restart, or a
 * branch's starting point); *last: it is FILE's last checkpoint. */
static void reload(const char* file, const char* sel, int64_t* at_step, double* at_time, int* last) { /*R*/
  rewind_reader* r;                                                                       /*R*/
  rewind_step_entry e = {0}, latest = {0};                                                /*R*/
  rewind_topology t = {0};                                                                /*R*/
  const char* note = "";                                                                  /*R*/
  if (rewind_reader_open(&r, comm, file) || rewind_reader_find_checkpoint(r, "latest", &latest, NULL) || /*R*/
      rewind_reader_find_checkpoint(r, sel, &e, &note) || rewind_reader_topology(r, e.step, &t)) { /*R*/
    if (rank == 0) fprintf(stderr, "heat: %s\n", rewind_last_error());                      /*R*/
    MPI_Abort(MPI_COMM_WORLD, 1);  /*R*/
  }
  if (rank == 0 && *note) printf("heat: note: %s\n", note);
  *last = latest.step == e.step;
  int64_t rows[MAXB], n = 0;  /*R*/
  double* dest[MAXB];  /*R*/
  for (int b = 0; b < nb; ++b)  /*R*/
    if (blk[b].nchild == 0 && blk[b].owner == rank)  /*R*/
      for (int64_t row = 0; row < t.n_grids; ++row)  /*R*/
        if (t.uid[row] == blk[b].uid) rows[n] = row, dest[n++] = blk[b].T;  /*R*/
  if (rewind_reader_read_into(r, e.step, "T", n, rows, dest, 1)) MPI_Abort(MPI_COMM_WORLD, 1); /*R*/
  *at_step = e.step, *at_time = e.time;  /*R*/
  rewind_reader_close(r); /*R*/
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  if (argc < 3) {
    if (rank == 0)
      fprintf(stderr,
              "usage: heat OUT.h5 STEPS [--restart FILE@SEL] [--listen HOST:PORT] [--collector thread|rank] [--vis N] "
              "[--cp N] [--refine K] [--progress 1] [--kappa K]\n");
    MPI_Finalize();
    return 2;
  }
  const char *out = argv[1], *restart = NULL, *listen = NULL;
  int progress = 0;
  const char* kappa_set = NULL;
  const int64_t steps = atoll(argv[2]);
  int vis = 10, cp = 50, where = REWIND_COLLECTOR_THREAD;                            /*R*/
  for (int a = 3; a + 1 < argc; a += 2) {
    if (!strcmp(argv[a], "--restart")) restart = argv[a + 1];
    else if (!strcmp(argv[a], "--listen")) listen = argv[a + 1];
    else if (!strcmp(argv[a], "--collector")) where = strcmp(argv[a + 1], "rank") ? REWIND_COLLECTOR_THREAD : REWIND_COLLECTOR_RANK; /*R*/
    else if (!strcmp(argv[a], "--vis")) vis = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--cp")) cp = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--refine")) refine = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--progress")) progress = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--kappa")) kappa = atof(argv[a + 1]), kappa_set = argv[a + 1];
  }
  rewind_config* cfg;                                                              /*R*/
  const int cells[3] = {S, S, 1};                                                  /*R*/
  const double domain[6] = {0, 1, 0, 1, 0, 1};                                     /*R*/
  rewind_config_create(&cfg);                                                      /*R*/
  rewind_config_set_geometry(cfg, 2, cells, 2, domain);                            /*R*/
  rewind_config_add_variable(cfg, "T", "K");                                       /*R*/
  rewind_config_set_text(cfg, "creator", "heat.c (examples/heat-c)");              /*R*/
  rewind_live* live = NULL;                                                        /*R*/
  if (listen) { /* first: with `--collector rank` the last process becomes the collector */
    int is_compute;                                                                /*R*/
    if (rewind_live_start(&live, MPI_COMM_WORLD, where, listen, NULL, cfg, &comm, &is_compute)) goto fail; /*R*/
    if (!is_compute) { /* the collector's rank: the run is over */                 /*R*/
      MPI_Finalize();
      return 0;
    }
    MPI_Comm_rank(comm, &rank);
    int port = 0;                                                                  /*R*/
    if (rewind_live_port(live, &port)) goto fail;                                  /*R*/
    if (rank == 0 && port) printf("heat: listening on port %d\n", port), fflush(stdout);
    rewind_live_allow_futures(live, 16); /* it continues on its BRANCH event's comm */                      /*R*/
    rewind_live_declare(live, "kappa", "m^2/s", 1e-6, 1.0, 1, &kappa, "diffusivity");                       /*R*/
    rewind_live_declare(live, "q", "K/s", 0.0, 100.0, 1, &q, "strength of the hot spot");                   /*R*/
  }
  build(0, 0, 0, -1);
  int leaves = 0, leaf_index[MAXB];
  for (int b = 0; b < nb; ++b) leaf_index[b] = blk[b].nchild == 0 ? leaves++ : -1;
  double* all = malloc(sizeof(double) * S * S * (size_t)leaves);
  rewind_grids* grids = NULL; /*R*/
  distribute(&grids, leaves);
  int64_t n = 0;
  double t = 0;
  rewind_file* file;                                                                 /*R*/
  if (restart) {
    const char* at = strrchr(restart, '@'); /* FILE@SEL, split at the last '@' as `rewind run` does */
    char path[4096];
    snprintf(path, sizeof path, "%.*s", (int)(at ? at - restart : (long)strlen(restart)), restart);
    int last;
    reload(path, at && at[1] ? at + 1 : "latest", &n, &t, &last);
    char change[64];
    const char* changes[1] = {change};
    snprintf(change, sizeof change, "kappa=%s", kappa_set ? kappa_set : "");
    if (last ? rewind_file_append(&file, comm, path, cfg)                                             /*R*/
             : rewind_file_create_branch(&file, comm, out, path, n, kappa_set ? 1 : 0, changes, cfg)) /*R*/
      goto fail;
  } else if (rewind_file_create(&file, comm, out, cfg)) {                             /*R*/
    goto fail;
  }
  if (!restart && rewind_file_write(file, 0, 0.0, 0.0, REWIND_CHECKPOINT, grids, 0, NULL, 0)) goto fail; /*R*/
  const double dt = 0.2 * pow(1.0 / (S << (3 + refine)), 2); /* stable for kappa <= 1 on the finest cells */
  for (int stop = 0; n < steps && !stop;) {
    step(dt, all, leaf_index, leaves);
    t += dt, ++n;
    if (progress && rank == 0) printf("step %lld\n", (long long)n), fflush(stdout);
    int written = 0; /* the live link first: a boundary's steering precedes its output */
    if (live) {
      if (rewind_live_boundary(live, n, t, grids, file)) goto fail;                                      /*R*/
      rewind_event e;                                                                                    /*R*/
      for (int has; rewind_live_next_event(live, &e, &has) == REWIND_OK && has;) {                       /*R*/
        if (e.kind == REWIND_EVENT_SET && !strcmp(e.name, "kappa")) kappa = e.value[0];                  /*R*/
        if (e.kind == REWIND_EVENT_SET && !strcmp(e.name, "q")) q = e.value[0];                          /*R*/
        if (e.kind == REWIND_EVENT_SET && rank == 0) printf("heat: %s = %g from step %lld\n", e.name, e.value[0], (long long)n + 1);
        if (e.kind == REWIND_EVENT_STOP) stop = 1;                                                       /*R*/
        if (e.kind == REWIND_EVENT_BRANCH) {                                                             /*R*/
          if (e.comm != comm) { /* one of several futures: on its group of ranks from now on */          /*R*/
            comm = e.comm;                                                                               /*R*/
            distribute(&grids, leaves);
          }
          char from[32];
          snprintf(from, sizeof from, "%lld", (long long)e.step);
          int last;
          reload(e.parent, from, &n, &t, &last);
          if (rank == 0)
            printf("heat: branched %s from %s step %lld (future %d of %d on %d ranks: %s)\n", e.file, /*R*/
                   e.parent, (long long)e.step, e.future + 1, e.futures, nranks,
                   *e.changes ? e.changes : "no changes");                                             /*R*/
          if (rewind_file_write(file, n, t, dt, REWIND_CHECKPOINT, grids, 0, NULL, 0)) goto fail;      /*R*/
          written = 1; /* the branch's first step: its parent's, bit for bit */
        }
      }
    }
    int64_t last_step;                                                                 /*R*/
    if (rewind_file_last_step(file, &last_step)) goto fail;                            /*R*/
    if (written || n <= last_step) continue; /* a continued run: steps its file has */
    if (stop || n % cp == 0 || n == steps) {
      if (rewind_file_write(file, n, t, dt, REWIND_CHECKPOINT, grids, 0, NULL, 0)) goto fail;           /*R*/
    } else if (n % vis == 0 && rewind_file_write(file, n, t, dt, REWIND_VISUALISATION, grids, 0, NULL, 1)) { /*R*/
      goto fail;
    }
  }
  if (rank == 0) printf("heat: %lld steps to t = %g, kappa = %g, q = %g\n", (long long)n, t, kappa, q);
  rewind_live_finish(live);                                                        /*R*/
  if (rewind_file_close(file)) goto fail;                                          /*R*/
  rewind_grids_free(grids);                                                        /*R*/
  rewind_config_free(cfg);                                                         /*R*/
  MPI_Finalize();
  return 0;
fail:
  if (rank == 0) fprintf(stderr, "heat: %s\n", rewind_last_error());               /*R*/
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}
