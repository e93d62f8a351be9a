// The C API's live calls in a kernel-only build (REWIND_KERNEL_ONLY: no live link, no
// collector): each refuses with one message saying why, so a code built against such an
// installation learns it at its first live call instead of failing to link.
#include "handles.hpp"

using namespace rwd::api;

namespace {
rewind_status unavailable() {
  return fail(REWIND_ERR_ARGUMENT,
              "this Rewind was built kernel-only (REWIND_KERNEL_ONLY): output and restart, no live windows or "
              "steering; install the whole of Rewind for rewind_live_*");
}
}  // namespace

extern "C" {
rewind_status rewind_live_start(rewind_live** live, MPI_Comm, int, const char*, const char*, const rewind_config*, MPI_Comm* compute,
                      int* is_compute) {
  if (live != nullptr) *live = nullptr;
  if (compute != nullptr) *compute = MPI_COMM_NULL;
  if (is_compute != nullptr) *is_compute = 1;
  return unavailable();
}
rewind_status rewind_live_port(const rewind_live*, int* port) {
  if (port != nullptr) *port = 0;
  return unavailable();
}
rewind_status rewind_live_declare(rewind_live*, const char*, const char*, double, double, int, const double*, const char*) {
  return unavailable();
}
rewind_status rewind_live_boundary(rewind_live*, int64_t, double, const rewind_grids*, rewind_file*) { return unavailable(); }
rewind_status rewind_live_next_event(rewind_live*, rewind_event*, int* has_event) {
  if (has_event != nullptr) *has_event = 0;  // the documented loop ends
  return unavailable();
}
rewind_status rewind_live_finish(rewind_live*) { return REWIND_OK; }
rewind_status rewind_live_allow_futures(rewind_live*, int) { return unavailable(); }
rewind_status rewind_live_event_comm_f(const rewind_live*, MPI_Fint* comm) {
  if (comm != nullptr) *comm = 0;
  return unavailable();
}
rewind_status rewind_live_start_f(rewind_live** live, MPI_Fint, int, const char*, const char*, const rewind_config*, MPI_Fint* compute,
                        int* is_compute) {
  if (live != nullptr) *live = nullptr;
  if (compute != nullptr) *compute = MPI_Comm_c2f(MPI_COMM_NULL);
  if (is_compute != nullptr) *is_compute = 1;
  return unavailable();
}
}
