/* Rewind's C API: output, restart and branches of a space-tree (or block-structured)
 * code in one shared parallel HDF5 file — the kernel behind `rewind run`, for any MPI
 * code written in C, C++ or Fortran (module `rewind`, api/fortran/rewind.f90).
 *
 * The calls in the order a code makes them (docs/adopting.md walks through them). Every
 * call on a file, a collective reader or the live service is collective: EVERY rank of
 * its communicator makes it, in the same order, with the same scalar arguments (below,
 * "Collectives"); a rank that skips one leaves the others waiting or refused.
 *
 *   rewind_config* cfg;  rewind_config_create(&cfg);          // constants of the run
 *   rewind_config_set_geometry(cfg, 2, cells, 2, domain);     // dim, cells per grid, r, box
 *   rewind_config_add_variable(cfg, "T", "K");                // variable 0, 1, ...
 *   rewind_config_set_option(cfg, "strategy", "auto");        // any [output.io] option
 *
 *   rewind_grids* g;  rewind_grids_create(&g, halo);          // this rank's grids
 *   rewind_grids_add(g, uid, level, key, bbox, parent, nc, children, &i);
 *   rewind_grids_set_field(g, i, 0, my_array);                // NULL on a parent: averaged
 *
 *   rewind_file* f;  rewind_file_create(&f, comm, "run.h5", cfg);
 *   rewind_file_set_scalar(f, "drag", drag);                 // the step's monitors (optional)
 *   rewind_file_write(f, step, time, dt, REWIND_CHECKPOINT, g, 0, NULL, 0);  // committed on return
 *   rewind_file_close(f);
 *
 *   rewind_reader* r;  rewind_reader_open(&r, comm, "run.h5");  // restart, any rank count
 *   rewind_reader_find_checkpoint(r, "latest", &entry, NULL);  // as `rewind run --restart run.h5@latest`
 *   rewind_reader_topology(r, entry.step, &topo);            // the whole tree of the step
 *   rewind_reader_partition(r, entry.step, rank, size, &n, &rows);  // the rows this rank takes
 *   rewind_reader_read(r, entry.step, "T", n, rows, buffer); // interiors, row after row
 *
 * Conventions (the kernel's data contract, docs/file-format.md §2):
 * - A grid is a block of cells[0] x cells[1] x cells[2] cells (2-D: cells[2] = 1), the
 *   same for every grid. Arrays are x fastest, C order (z, y, x) — Fortran's (x, y, z)
 *   — with `halo` ghost layers on every side, along z too in 2-D ((1 + 2h) layers, the
 *   interior in layer h): element (i, j, k) of the interior is at
 *   (i + h) + nx ((j + h) + ny (k + h)), nx = cells[0] + 2h, ny = cells[1] + 2h. Only
 *   interior cells are read.
 * - uid: any unique 64-bit name of a grid, stable across partitions; level 0 is the
 *   root (exactly one grid); sort_key orders grids within a level along the code's
 *   space-filling curve (the file's rows are sorted by level, rank, sort_key).
 * - bbox = {xmin, xmax, ymin, ymax, zmin, zmax} of the grid's interior cells.
 * - A grid with children may be given without arrays (NULL): the library stores the
 *   average of its children there (parent cell = mean of the child cells it covers),
 *   as the file format promises, computed across ranks. A parent given with arrays is
 *   written as given.
 *
 * Errors: every call but the three that return the library's version and message returns
 * a rewind_status: REWIND_OK (0) or an error; a value a call yields comes back through a
 * pointer argument, never mixed with the status (API version 3: rewind_grids_count,
 * rewind_file_last_step and rewind_live_port returned their value before). The message of the last
 * failed call on this thread is rewind_last_error() (one line, naming the file and the
 * problem). No C++ exception crosses this interface. A failed write leaves every earlier
 * committed step intact.
 *
 * Collectives: calls taking or holding a communicator (rewind_file_*, rewind_reader_*
 * opened with a communicator, rewind_live_* but _port, _declare and _next_event) are
 * collective over it unless marked "local": every rank of the communicator makes the
 * call, in the same order, with bit-identical scalar arguments (step, time, dt, kind,
 * the vars list, float32, paths, names, selectors, changes, the configuration). Each
 * rank first checks its own arguments, then one reduction decides for all: if any rank's
 * check failed, or the ranks' arguments differ (a time one ulp apart, a kind, ranks in
 * different calls), the call fails with the same status on every rank before it acts,
 * the message naming the rank and what differs or is wrong (REWIND_ERR_ARGUMENT for a
 * difference). Nothing is written by a refused call; the file goes on with the next good
 * one. Per-rank data (a rank's grids, its rows, its arrays) may of course differ. What
 * rewind_file_write checks besides: time and dt finite; step and time not before the
 * file's last committed step; every grid's slot within the file's variables; and, once
 * per change of the grids (rewind_grids_add / _clear), the tree the ranks describe
 * together: each box its level's size (domain / refinement^level) on the level's grid
 * lines, a child one level below its parent and inside its box, every parent described,
 * no uid twice. A NULL handle (rewind_file*, rewind_live*) cannot be agreed on (it holds
 * the communicator): that rank alone returns REWIND_ERR_ARGUMENT.
 *
 * Versioning: REWIND_API_VERSION is bumped on any incompatible change. The create
 * functions are macros that pass the version this header declares; the library
 * refuses a mismatch (REWIND_ERR_VERSION) instead of misreading a struct. Version 4:
 * rewind_event gained future, futures, changes and comm (several futures at once).
 */
#ifndef REWIND_REWIND_H
#define REWIND_REWIND_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this header's API. */
#define REWIND_API_VERSION 4

/** What a call returned. */
typedef enum rewind_status {
  REWIND_OK = 0,
  REWIND_ERR_ARGUMENT = 1,     /**< a bad argument: NULL handle, unknown option or variable, bad value */
  REWIND_ERR_NOT_FOUND = 2,    /**< no such file (or it cannot be opened at all) */
  REWIND_ERR_FORMAT = 3,       /**< not a Rewind file, a newer major format, a missing or misshapen object */
  REWIND_ERR_NO_SUCH_STEP = 4, /**< the step selector names no committed step */
  REWIND_ERR_CORRUPT = 5,      /**< a checksum or HDF5's own metadata does not match: damaged data */
  REWIND_ERR_IO = 6,           /**< a read or write failed (disk full, permissions, MPI-IO) */
  REWIND_ERR_STATE = 7,        /**< a call out of order (a write after close, ...) */
  REWIND_ERR_VERSION = 8,      /**< this header's REWIND_API_VERSION is not the library's */
  REWIND_ERR_EXISTS = 9,       /**< the file to create exists already (nothing was written) */
  REWIND_ERR_CLAIMED = 10,     /**< another job writes that file (one writing job per file; the message names it) */
  REWIND_ERR_NETWORK = 11,     /**< live: the address cannot be listened on */
  REWIND_ERR_INTERNAL = 99     /**< a bug: please report the message */
} rewind_status;

/** Kinds of output step. */
enum { REWIND_VISUALISATION = 0, REWIND_CHECKPOINT = 1 };

/** The message of the last failed call on this thread ("" if none). Local. */
const char* rewind_last_error(void);
/** The API version the library implements. Local. */
int rewind_api_version(void);
/** "rewind-kernel 0.1.0": the library's version. Local. */
const char* rewind_library_version(void);

/* --- Constants of a run ------------------------------------------------------------ */

typedef struct rewind_config rewind_config;

/** A new configuration (empty variables, the kernel's default options). Local. */
#define rewind_config_create(cfg) rewind_config_create_v((cfg), REWIND_API_VERSION)
rewind_status rewind_config_create_v(rewind_config** cfg, int api_version);
/** Frees it (NULL is fine). Local. */
rewind_status rewind_config_free(rewind_config* cfg);
/** dim 2 or 3; cells per grid per axis (2-D: cells[2] = 1); refinement r (children per
 *  axis of a refined grid: r^dim children); domain = the root grid's box. Local. */
rewind_status rewind_config_set_geometry(rewind_config* cfg, int dim, const int cells[3], int refinement, const double domain[6]);
/** Adds a cell variable (name: letters, digits, '_'; unit: free text, "" for none); its
 *  index (0, 1, ...) is the slot of rewind_grids_set_field. Local. */
rewind_status rewind_config_add_variable(rewind_config* cfg, const char* name, const char* unit);
/** Sets an [output.io] option by name from its text ("strategy" = "auto" | "collective" |
 *  "independent" | "aggregated" | "dedicated", "checksums" = "true", "compression" =
 *  "deflate", ...: the table of `rewind keys output.io`, docs/file-format.md §4).
 *  REWIND_ERR_ARGUMENT names an unknown option or a bad value. Local. */
rewind_status rewind_config_set_option(rewind_config* cfg, const char* name, const char* value);
/** The name of the program that writes ("creator"), its version ("code_version"), or
 *  the text of its input deck ("case_text"), stored in /common. Local. */
rewind_status rewind_config_set_text(rewind_config* cfg, const char* key, const char* value);
/** A named constant stored in /common/fluid or /common/time_stepping (group "fluid" or
 *  "time_stepping"). Local. */
rewind_status rewind_config_set_constant(rewind_config* cfg, const char* group, const char* name, double value);

/* --- This rank's grids -------------------------------------------------------------- */

typedef struct rewind_grids rewind_grids;

/** An empty description; every array handed to it has `halo` ghost layers. Local. */
#define rewind_grids_create(grids, halo) rewind_grids_create_v((grids), (halo), REWIND_API_VERSION)
rewind_status rewind_grids_create_v(rewind_grids** grids, int halo, int api_version);
rewind_status rewind_grids_free(rewind_grids* grids);
/** Forgets every grid (an adaptive tree changed: describe it again). Local. */
rewind_status rewind_grids_clear(rewind_grids* grids);
/** Adds one grid this rank owns; `index` (may be NULL) receives its index for
 *  rewind_grids_set_field. parent_uid: UINT64_MAX for the root; child_uids: the
 *  n_children children (0 for a leaf, at most refinement^dim). Local. */
rewind_status rewind_grids_add(rewind_grids* grids, uint64_t uid, int level, uint64_t sort_key, const double bbox[6],
                     uint64_t parent_uid, int n_children, const uint64_t* child_uids, int64_t* index);
/** The array of variable `slot` of grid `index` (the padded layout above), borrowed until
 *  the next write. NULL (or never set) on a grid with children: the library averages
 *  them. Local; the grids know no file, so rewind_file_write refuses a slot the file has
 *  no variable for. */
rewind_status rewind_grids_set_field(rewind_grids* grids, int64_t index, int slot, const double* data);
/** rewind_grids_set_field for a code whose arrays are float32: the same layout, borrowed
 *  until the next write. Stored as the file's type — double in a checkpoint, float32 in a
 *  visualisation step written with float32 — converted once per write (and live
 *  boundary), so a float32 visualisation step holds the code's values exactly. A slot
 *  holds the last array given, double or float. Local. */
rewind_status rewind_grids_set_field_float(rewind_grids* grids, int64_t index, int slot, const float* data);
/** Cell types (uint8, same padded layout), written as the step's cell_type; borrowed. Local. */
rewind_status rewind_grids_set_cell_type(rewind_grids* grids, int64_t index, const uint8_t* types);
/** Grids described on this rank, in *n. Local. */
rewind_status rewind_grids_count(const rewind_grids* grids, int64_t* n);

/* --- A run file, written --------------------------------------------------------- */

typedef struct rewind_file rewind_file;

/** Creates `path` for a new run with the configuration's constants and options.
 *  REWIND_ERR_EXISTS if it exists (nothing touched). Collective. */
rewind_status rewind_file_create(rewind_file** file, MPI_Comm comm, const char* path, const rewind_config* cfg);
/** Creates the branch file `path` of `parent`'s committed step `parent_step`: the
 *  parent's constants, a lineage naming the parent, the step and the n_changes
 *  "key=value" changes (recorded, not interpreted: the code applies them), and an entry
 *  in the parent's branch registry. The parent is never written to; `cfg` gives the
 *  options (NULL: defaults). REWIND_ERR_EXISTS if `path` exists; REWIND_ERR_ARGUMENT if
 *  parent_step is a visualisation step (a branch needs a checkpoint): nothing is created.
 *  Collective. */
rewind_status rewind_file_create_branch(rewind_file** file, MPI_Comm comm, const char* path, const char* parent,
                              int64_t parent_step, int n_changes, const char* const* changes, const rewind_config* cfg);
/** Opens an existing run file to continue it (after a restart from its last committed
 *  step): steps written after the last committed one (a crash) are dropped; new steps
 *  must be numbered after it. `cfg` gives the options (NULL: defaults). Collective. */
rewind_status rewind_file_append(rewind_file** file, MPI_Comm comm, const char* path, const rewind_config* cfg);
/** Writes one step from the grids' arrays: every variable for a checkpoint
 *  (REWIND_CHECKPOINT: everything needed to continue), or for a visualisation step
 *  (REWIND_VISUALISATION) the `n_vars` variables listed in `vars` (slots; n_vars 0 =
 *  all), as float32 when `float32` is non-zero. Committed (crash-safe) when it returns.
 *  Steps must be numbered in increasing order, times never decrease within a file, time
 *  and dt are finite; the grids' tree is checked once per change (see "Collectives").
 *  The named scalars set since the last write (rewind_file_set_scalar) are agreed like
 *  the other arguments and stored with the step.
 *  Collective: every argument but `grids` the same on every rank. */
rewind_status rewind_file_write(rewind_file* file, int64_t step, double time, double dt, int kind, const rewind_grids* grids,
                      int n_vars, const int* vars, int float32);
/** Records a named scalar of the next step this rank writes: one of the code's monitors
 *  (drag, energy, a residual). `name`: letters, digits and '_'; setting a name again
 *  replaces its value; `value` finite. Local: the next rewind_file_write takes every
 *  scalar set since the previous write (in the order first set), agrees on them across
 *  ranks — the names, their order and the values bit for bit, like its other arguments:
 *  a rank that set another list or another value refuses the write on every rank — and
 *  stores them in the step (docs/file-format.md, `scalar_names`, `scalar_values`;
 *  `rewind info`, Python's Step.scalars). Every write, refused or not, starts a new list. */
rewind_status rewind_file_set_scalar(rewind_file* file, const char* name, double value);
/** The last committed step's number in *step, -1 if none. Local. */
rewind_status rewind_file_last_step(const rewind_file* file, int64_t* step);
/** Flushes, closes and frees (NULL is fine). Collective; if the ranks are not all
 *  closing it (REWIND_ERR_ARGUMENT on every rank) the file stays open. */
rewind_status rewind_file_close(rewind_file* file);

/* --- A run file, read (restart, branches, analysis) ---------------------------------- */

typedef struct rewind_reader rewind_reader;

/** One step of a file. */
typedef struct rewind_step_entry {
  int64_t step;       /**< the code's step number */
  double time;        /**< simulated time */
  double dt;          /**< the step size stored with it */
  int32_t kind;       /**< REWIND_VISUALISATION or REWIND_CHECKPOINT */
  int32_t committed;  /**< 1: complete (the only steps a restart may use) */
  int64_t n_grids;
  int32_t n_levels;
} rewind_step_entry;

/** The tree of one step as stored, one entry per row (row i = the same grid in every
 *  dataset): arrays owned by the reader, valid until its next topology call or close. */
typedef struct rewind_topology {
  int64_t n_grids;
  int32_t max_children;          /**< width of child_uids / child_rows */
  int32_t n_levels;
  const uint64_t* uid;
  const uint64_t* sort_key;
  const int32_t* level;
  const uint64_t* parent_uid;    /**< UINT64_MAX for the root */
  const int64_t* parent_row;     /**< -1 for the root */
  const uint64_t* child_uids;    /**< n_grids * max_children, UINT64_MAX = none */
  const int64_t* child_rows;     /**< n_grids * max_children, -1 = none */
  const double* bbox;            /**< n_grids * 6 */
  const int64_t* level_offsets;  /**< n_levels + 1: rows [off[l], off[l+1]) are level l */
} rewind_topology;

/** Opens `path` read-only. With a communicator (not MPI_COMM_NULL) the reads are
 *  collective over it (every rank calls them, each with its own rows); with
 *  MPI_COMM_NULL the reader is serial and local. */
rewind_status rewind_reader_open(rewind_reader** reader, MPI_Comm comm, const char* path);
rewind_status rewind_reader_close(rewind_reader* reader);
/** Committed steps of the file. Local. */
rewind_status rewind_reader_step_count(rewind_reader* reader, int64_t* n);
/** The i-th committed step (0 = first, -1 = last). Local. */
rewind_status rewind_reader_step_at(rewind_reader* reader, int64_t i, rewind_step_entry* entry);
/* Selectors are the command line's (kernel/src/read/select.cpp, one implementation): "latest",
 * a step number "42", "#i" (i-th committed step, negative from the end) or "t=0.5". Two
 * questions, two calls: */
/** The step to look at — windows, analysis, `rewind window FILE@SEL`: "latest" is the last
 *  committed step of any kind, "t=T" the step in force at T (a time after the last step
 *  is refused). It may be a visualisation step (float32, some variables): never restart
 *  from it. REWIND_ERR_NO_SUCH_STEP names what there is. Local. */
rewind_status rewind_reader_find_step(rewind_reader* reader, const char* selector, rewind_step_entry* entry);
/** The checkpoint to restart from — `rewind run --restart FILE@SEL` picks the same:
 *  "latest" is the last committed checkpoint, "t=T" the last checkpoint at or before the
 *  step in force at T; "42" and "#i" must name a checkpoint. `*note` (if `note` is not
 *  NULL) is "" or the line the command line prints when the checkpoint is not exactly the
 *  one asked for ("t=0.25: step 30 (t = 0.25) is a visualisation output; restarting from
 *  the last checkpoint at or before it, step 20 (t = 0.2)"), owned by the reader until
 *  its next call of this. REWIND_ERR_NO_SUCH_STEP (no such checkpoint: the message lists
 *  them) or REWIND_ERR_CORRUPT (the choice would pass over a damaged step). Local. */
rewind_status rewind_reader_find_checkpoint(rewind_reader* reader, const char* selector, rewind_step_entry* entry,
                                  const char** note);
/** The tree of `step`. Local. */
rewind_status rewind_reader_topology(rewind_reader* reader, int64_t step, rewind_topology* topo);
/** The rows `rank` of `nranks` takes for a restart on any rank count (contiguous pieces
 *  of every level along the curve); `rows` is owned by the reader until its next
 *  partition call. Local. */
rewind_status rewind_reader_partition(rewind_reader* reader, int64_t step, int rank, int nranks, int64_t* n_rows,
                            const int64_t** rows);
/** Reads variable `name` of the given rows into `out` (n_rows * cells doubles, interior
 *  only, row after row; float32 data converted); verifies the rows' checksums
 *  (REWIND_ERR_CORRUPT names step, dataset and row). Collective for a collective reader. */
rewind_status rewind_reader_read(rewind_reader* reader, int64_t step, const char* name, int64_t n_rows, const int64_t* rows,
                       double* out);
/** Like rewind_reader_read, straight into padded arrays: dest[i] (with `halo` ghost layers)
 *  receives row rows[i]; ghosts are left alone. */
rewind_status rewind_reader_read_into(rewind_reader* reader, int64_t step, const char* name, int64_t n_rows,
                            const int64_t* rows, double* const* dest, int halo);
/** The file's branch origin: parent file ("" for an original run, relative to this
 *  file's directory), its step (-1) and time; strings owned by the reader. Local. */
rewind_status rewind_reader_lineage(rewind_reader* reader, const char** parent_file, int64_t* parent_step, double* parent_time);
/** The named scalars of committed `step` (rewind_file_set_scalar): how many, and the i-th
 *  name (owned by the reader) and value, in the order written. 0 for a step that has none
 *  (and in files before format 1.8). Local. */
rewind_status rewind_reader_scalar_count(rewind_reader* reader, int64_t step, int* n);
rewind_status rewind_reader_scalar(rewind_reader* reader, int64_t step, int i, const char** name, double* value);
/** The file's variables: count, and the i-th name and unit (owned by the reader). Local. */
rewind_status rewind_reader_variable_count(rewind_reader* reader, int* n);
rewind_status rewind_reader_variable(rewind_reader* reader, int i, const char** name, const char** unit);

/* --- Live windows and steering ----------------------------------------------------- */

/* A running code answers clients (`rewind window HOST:PORT`, `rewind steer`, Python,
 * ParaView's live source) at its step boundaries: windows of the state it holds (the
 * level-of-detail rule of the files, parents averaged from the grids' leaves), windows of
 * the steps it wrote, and steering — changes of the parameters it declared, pause /
 * resume / stop, and branches: "go back to step S of file F with these changes".
 *
 *   rewind_live* live;  int is_compute;  MPI_Comm comm;
 *   rewind_live_start(&live, MPI_COMM_WORLD, REWIND_COLLECTOR_THREAD, "127.0.0.1:0", NULL, cfg, &comm, &is_compute);
 *   rewind_live_declare(live, "kappa", "m^2/s", 0, 1, 1, &kappa, "diffusivity");
 *   for (...) {                        // every step
 *     ... compute ...
 *     rewind_live_boundary(live, step, time, grids, file);   // may block while paused
 *     rewind_event e;  int has;
 *     while (rewind_live_next_event(live, &e, &has) == REWIND_OK && has) {
 *       if (e.kind == REWIND_EVENT_SET) kappa = e.value[0];
 *       if (e.kind == REWIND_EVENT_BRANCH) branch_to(&e);  // below: reload, then write the branch point
 *       if (e.kind == REWIND_EVENT_STOP) done = 1;
 *     }
 *     ... write the outputs that are due (steering precedes output: a SET is in force
 *         in the steps written after it, a STOP's last step is written) ...
 *   }
 *   rewind_live_finish(live);
 *
 * After a BRANCH event a code must, on every rank: reload its state from e.parent at
 * e.step (rewind_reader_find_checkpoint(reader, "<e.step>", ...), then its rows; the
 * event's step is always a checkpoint), set its step counter and time to e.step and
 * e.time, and take the SET events that follow (the parameters of that step plus the
 * branch's changes; they act from the next step on). It should then write the branch
 * point as the branch's first step, rewind_file_write(file, e.step, e.time, dt,
 * REWIND_CHECKPOINT, grids, 0, NULL, 0) — `file` already writes e.file — before stepping
 * on: until a first checkpoint the branch file holds no step to restart from, and this
 * one equals its parent's step bit for bit (examples/heat-c does so).
 *
 * Several futures at once (`rewind steer ADDR branch --future 'k=v' --future 'k=v'`): a
 * fork of K futures splits the G compute ranks of the future it forks into K groups of
 * consecutive ranks (floor(G/K) each, the first G mod K one more; K > G is refused,
 * naming how many ranks it needs; so is any fork of more futures than the code allows
 * with rewind_live_allow_futures, default 1). Each of those ranks gets one BRANCH event:
 * e.future of e.futures, its changes, its file and e.comm, its group's communicator (the
 * other futures' ranks get none and go on). From then on the code computes on e.comm —
 * its partition, its collectives, its reader for the reload — and its rewind_file writes
 * e.file over e.comm (the library switched it). The
 * live calls stay collective over the compute communicator rewind_live_start returned:
 * every rank calls rewind_live_boundary once per step of its own future (each with its
 * own step, time and grids; the library meets the ranks once per future there) and,
 * when its future ends (a STOP for it, or its last step), rewind_live_finish, which
 * returns once every future has ended. `rewind steer ADDR status` lists the futures and
 * their ranks, `rewind window ADDR --file F` shows one, `pause --file F` holds one in
 * rewind_live_boundary while the others step, `stop --file F` stops one; a future can be
 * forked again (its group split further). examples/heat-c re-partitions its leaves
 * onto e.comm.
 *
 * Two places for the collector: REWIND_COLLECTOR_THREAD, a thread of rank 0 of the code's
 * communicator (the Catalyst Live model: no extra process; windows are answered at the
 * next boundary); REWIND_COLLECTOR_RANK, the last rank of the communicator given, taken
 * from the code (the Damaris model: rewind_live_start runs the collector there until the
 * code finishes and returns is_compute = 0; the code runs on the returned communicator).
 */
typedef struct rewind_live rewind_live;

enum { REWIND_COLLECTOR_THREAD = 0, REWIND_COLLECTOR_RANK = 1 };
enum { REWIND_EVENT_SET = 1, REWIND_EVENT_STOP = 2, REWIND_EVENT_BRANCH = 3 };

/** What a boundary hands back (rewind_live_next_event), the same on every rank of the
 *  future it concerns. Strings are the library's, valid until the next boundary. */
typedef struct rewind_event {
  int32_t kind;           /**< REWIND_EVENT_SET, _STOP or _BRANCH */
  int32_t n;              /**< SET: components of `value` (1 or 3) */
  const char* name;       /**< SET: the parameter */
  double value[3];        /**< SET: its new value, in force from the next step */
  const char* parent;     /**< BRANCH: the file to reload the state from */
  int64_t step;           /**< BRANCH: its step (a checkpoint); the code continues from it */
  double time;            /**< BRANCH: that step's time */
  const char* file;       /**< BRANCH: the branch file the run's rewind_file now writes */
  int32_t future;         /**< BRANCH: which future of the fork this rank computes, 0 .. futures-1 */
  int32_t futures;        /**< BRANCH: how many the fork started (1: a branch) */
  const char* changes;    /**< BRANCH: this future's changes, "key=value;key=value" ("" none) */
  MPI_Comm comm;          /**< BRANCH: the ranks this future computes on, from now on (the library's,
                               valid until rewind_live_finish; the previous one while futures = 1) */
} rewind_event;

/** Starts the live service of a run: listens on `listen` ("HOST:PORT", port 0: a free
 *  one, see rewind_live_port; a non-loopback host needs a token). `token` NULL: the
 *  environment's (REWIND_TOKEN, or the file REWIND_TOKEN_FILE names), else a generated
 *  one, printed on stdout by the process that listens ("rewind live: token ..."); ""
 *  for none (loopback only; any user of the machine may then steer the run: a warning
 *  on stderr); white space only is refused. `cfg` names the variables windows may ask
 *  for (the file's). `*compute` is the communicator the code computes on (a duplicate
 *  of `world` with the thread; without the collector's rank otherwise) and
 *  `*is_compute` 0 on the collector's rank, where the call returns when the run has
 *  finished. Collective over `world`. */
rewind_status rewind_live_start(rewind_live** live, MPI_Comm world, int where, const char* listen, const char* token,
                      const rewind_config* cfg, MPI_Comm* compute, int* is_compute);
/** The port clients connect to, in *port (on the process that listens; 0 elsewhere). Local. */
rewind_status rewind_live_port(const rewind_live* live, int* port);
/** Declares a steerable parameter, before the first boundary: n = 1 or 3 components,
 *  each kept in [min, max]; `value` its current value. Local (the same on every rank). */
rewind_status rewind_live_declare(rewind_live* live, const char* name, const char* unit, double min, double max, int n,
                        const double* value, const char* description);
/** How many futures one fork may start on this code (default 1): a code that computes on
 *  its BRANCH event's `comm` from then on (below, "Several futures at once") allows more
 *  (up to 16); a fork of more futures than allowed is refused, saying so, and the run
 *  goes on. Local (the same on every rank), before the first boundary. */
rewind_status rewind_live_allow_futures(rewind_live* live, int max_futures);
/** A step boundary: serves the windows, file queries and steering asked for since the
 *  last one from `grids` (the state of `step` at `time`) and `file` (the file being
 *  written, NULL if none), blocking while the run is paused. A branch writes the current
 *  state into `file` first (nothing is lost), then switches `file` to the branch.
 *  Collective over the compute communicator. */
rewind_status rewind_live_boundary(rewind_live* live, int64_t step, double time, const rewind_grids* grids, rewind_file* file);
/** The next event of the last boundary: REWIND_OK with *has_event = 1 (written to
 *  `event`) or 0 (none left); an error status (*has_event = 0, e.g. a kernel-only build)
 *  otherwise, so the loop above ends. Local. */
rewind_status rewind_live_next_event(rewind_live* live, rewind_event* event, int* has_event);
/** Ends the service: the run has finished (statuses say so); the collector answers what
 *  is under way and stops; frees `live` (NULL is fine). Collective. */
rewind_status rewind_live_finish(rewind_live* live);

/* Fortran: communicators cross as MPI_Fint (api/fortran/rewind.f90 calls these). */
rewind_status rewind_live_start_f(rewind_live** live, MPI_Fint world, int where, const char* listen, const char* token,
                        const rewind_config* cfg, MPI_Fint* compute, int* is_compute);
/** The Fortran handle of the communicator of the event rewind_live_next_event handed out
 *  last (MPI_Comm_c2f of its comm; 0 when it has none). Local. */
rewind_status rewind_live_event_comm_f(const rewind_live* live, MPI_Fint* comm);
rewind_status rewind_file_create_f(rewind_file** file, MPI_Fint comm, const char* path, const rewind_config* cfg);
rewind_status rewind_file_create_branch_f(rewind_file** file, MPI_Fint comm, const char* path, const char* parent,
                                int64_t parent_step, int n_changes, const char* const* changes,
                                const rewind_config* cfg);
rewind_status rewind_file_append_f(rewind_file** file, MPI_Fint comm, const char* path, const rewind_config* cfg);
rewind_status rewind_reader_open_f(rewind_reader** reader, MPI_Fint comm, const char* path);

#ifdef __cplusplus
}
#endif

#endif /* REWIND_REWIND_H */
