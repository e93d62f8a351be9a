/* Rewind's in-situ hook: the stable C ABI between a run and an analysis library.
 *
 * A shared library named in the case file ([insitu] library = "...", every = N, args =
 * "...") is loaded by `rewind run` (dlopen) and called every N steps with the step's
 * grids — the same plain description the I/O kernel takes (kernel/.../grids.hpp) — so
 * analysis runs beside the simulation without touching the disk (the Damaris plugin
 * model). This header is all a hook needs: plain C, no MPI header, no Rewind header.
 * docs/insitu.md is the user's guide; examples/insitu/ and insitu/catalyst/ are hooks.
 *
 * Versioning: REWIND_INSITU_ABI_VERSION is bumped on any change to the structs or the
 * entry points below. A hook states the version it was compiled against by putting
 * REWIND_INSITU_DEFINE_ABI_VERSION() in one of its files; the loader refuses a hook
 * whose version it does not know, before the run starts, with one line. Version 2 only
 * appended `file` to rewind_insitu_step_desc, so a hook built for version 1 (which does
 * not read it) still loads.
 *
 * Entry points (extern "C", all required; the loader names a missing one):
 *   int rewind_insitu_abi_version(void);
 *   int rewind_insitu_init(const rewind_insitu_init_info* info, char* error, int error_size);
 *   int rewind_insitu_step(const rewind_insitu_step_desc* step, char* error, int error_size);
 *   int rewind_insitu_finalize(char* error, int error_size);
 * Each returns 0 on success; on failure non-zero, with a one-line, NUL-terminated
 * message written into `error` (at most error_size bytes, including the NUL).
 *
 * Calling contract:
 * - init once, before the first step call; step every `every` steps (step % every ==
 *   0, the first step of a run included, and of each branch or future: each timeline
 *   has its own count); finalize once at the end of the run. Each
 *   is called on every rank of the communicator it is given (info->comm, step->comm:
 *   the same communicator: the compute ranks', or with output.io.strategy =
 *   "dedicated" the I/O ranks', each holding the grids of the compute ranks it
 *   serves), at the same step: a hook may call MPI collectives on it. A hook that fails on some ranks must still complete,
 *   on those ranks, the collectives the other ranks enter, then return its error.
 * - After an error on any rank (a non-zero return, or a C++ exception, which the
 *   loader catches at the boundary) the run reports one line naming the library and
 *   the step, and calls the hook no more (finalize excepted, when init succeeded); the
 *   run goes on. A crash inside a hook (SIGSEGV, abort) kills the process: it runs in
 *   the simulation's address space and cannot be contained there.
 * - Every pointer is borrowed and valid only during the call: copy what you keep.
 * - The hook must not write to the arrays and must not call MPI_Finalize.
 * - Calls come from the thread that runs the simulation, one at a time.
 */
#ifndef REWIND_INSITU_H
#define REWIND_INSITU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version of this header. */
#define REWIND_INSITU_ABI_VERSION 2
/** The oldest version a hook may have been built for (the structs only grew since). */
#define REWIND_INSITU_ABI_OLDEST 1

/** One grid ("d-grid") of the calling rank: a block of block[0] x block[1] x block[2]
 *  cells with `halo` ghost layers on every side. Arrays are x-fastest, C order
 *  (z, y, x), padded: element (i, j, k) of the interior, i in [0, block[0]) etc., is
 *  at index (i + halo) + nx * ((j + halo) + ny * (k + halo)) with nx = block[0] + 2 halo,
 *  ny = block[1] + 2 halo (a 2-D run has block[2] = 1 and a halo in z too). Halos hold
 *  the neighbours' values (or the boundary condition's ghost values) as the solver
 *  uses them at this step. */
typedef struct rewind_insitu_grid {
  uint64_t uid;                 /**< stable name of the grid: level << 58 | Morton code */
  int32_t level;                /**< 0 = root */
  int32_t is_leaf;              /**< 1: carries the solution; 0: a parent holding averages of its children */
  double bbox[6];               /**< xmin, xmax, ymin, ymax, zmin, zmax of the interior cells */
  const double* const* fields;  /**< n_variables padded arrays, in the order of step->variables */
  const uint8_t* cell_type;     /**< padded cell types (0 fluid, 1 solid, 2 interface; halo 0), or NULL */
} rewind_insitu_grid;

/** One step of the calling rank: what rewind_insitu_step() is given. */
typedef struct rewind_insitu_step_desc {
  int32_t abi_version;          /**< REWIND_INSITU_ABI_VERSION of the run */
  int32_t comm;                 /**< the calling ranks' communicator as a Fortran handle
                                     (MPI_Fint): MPI_Comm_f2c(step->comm) in C */
  int64_t step;                 /**< step number (0 = initial state) */
  double time;                  /**< simulated time */
  double dt;                    /**< the step that led here (0 at step 0) */
  int32_t dim;                  /**< 2 or 3 */
  int32_t block[3];             /**< cells per grid along x, y, z (2-D: block[2] = 1) */
  int32_t halo;                 /**< ghost layers around every array */
  int32_t n_variables;
  const char* const* variables; /**< names of what the case solves: "u", "v", "p"; "w" in 3-D;
                                     "T" with heat (velocity, kinematic pressure, temperature) */
  int64_t n_grids;              /**< grids on this rank (may be 0) */
  const rewind_insitu_grid* grids;
  const char* file;             /**< (version 2) the run file this step belongs to, as the
                                     run names it ("" when it writes none). A job forked into
                                     several futures hands each future's steps over, each
                                     with its own file, and the same step numbers may come
                                     once per future: tell them apart by `file`. */
} rewind_insitu_step_desc;

/** What init is told once, before the first step. */
typedef struct rewind_insitu_init_info {
  int32_t abi_version;          /**< REWIND_INSITU_ABI_VERSION of the run */
  int32_t comm;                 /**< as rewind_insitu_step_desc::comm */
  const char* args;             /**< [insitu] args of the case, verbatim ("" if none) */
  const char* case_name;        /**< [case] name ("" if none) */
  int64_t every;                /**< [insitu] every: steps between calls */
  int32_t dim;
  int32_t block[3];
  int32_t halo;
  double domain[6];             /**< xmin, xmax, ymin, ymax, zmin, zmax of the root grid */
} rewind_insitu_init_info;

typedef int (*rewind_insitu_abi_version_fn)(void);
typedef int (*rewind_insitu_init_fn)(const rewind_insitu_init_info* info, char* error, int error_size);
typedef int (*rewind_insitu_step_fn)(const rewind_insitu_step_desc* step, char* error, int error_size);
typedef int (*rewind_insitu_finalize_fn)(char* error, int error_size);

#ifdef __cplusplus
}
#define REWIND_INSITU_EXTERN_C extern "C"
#else
#define REWIND_INSITU_EXTERN_C
#endif

/** Put this once in a hook's sources: defines rewind_insitu_abi_version(). */
#define REWIND_INSITU_DEFINE_ABI_VERSION() \
  REWIND_INSITU_EXTERN_C int rewind_insitu_abi_version(void) { return REWIND_INSITU_ABI_VERSION; }

#endif /* REWIND_INSITU_H */
