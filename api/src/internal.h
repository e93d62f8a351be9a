/* Not part of Rewind's API (not installed, not in rewind.h): what bench/api uses to time
 * rewind_file_write with and without its checks (its own checks, the arguments' agreement
 * and the tree check), interleaved in one process. Codes never call these. */
#ifndef REWIND_API_INTERNAL_H
#define REWIND_API_INTERNAL_H

#ifdef __cplusplus
extern "C" {
#endif

/** on != 0: rewind_file_write runs only each rank's own checks, agrees on nothing and
 *  checks no tree (a rank that passes other arguments is no longer refused); 0: as
 *  documented (the default). Local, process-wide. */
void rewind_internal_unchecked_writes(int on);
/** Seconds this rank's last rewind_file_write spent in its checks (the local ones, the
 *  arguments' agreement and, after a change of the grids, the tree check). Local. */
double rewind_internal_check_seconds(void);

#ifdef __cplusplus
}
#endif

#endif /* REWIND_API_INTERNAL_H */
