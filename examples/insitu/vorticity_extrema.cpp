// An in-situ hook (rewind/insitu.h): the vorticity extrema of every step it is given,
// over all ranks, one CSV row per step, written by rank 0 of the hook's communicator.
//
//   [insitu]
//   library = "build/lib/rewind-insitu/librewind_insitu_vorticity.so"
//   every = 10
//   args = "vorticity.csv"      # the CSV (truncated at init)
//
// Columns: step, time, omega_min, omega_max. 2-D: omega = dv/dx - du/dy (signed);
// 3-D: omega = |curl u| (min and max of the magnitude). Derivatives are central
// differences, (q[i+1] - q[i-1]) / (2 h), taken from the padded arrays, so the cells
// on a grid's edge use the halo the run hands over; only leaf grids (they carry the
// solution) and non-solid cells (cell type != 1) count. Values are printed with 17
// significant digits: a reader can compare them to round-off.
//
// Everything here is plain C++ and MPI; the hook links nothing of Rewind.
#include <mpi.h>

#include <rewind/insitu.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <string>

REWIND_INSITU_DEFINE_ABI_VERSION()

namespace {

std::FILE* csv = nullptr;  // rank 0 only
MPI_Comm comm = MPI_COMM_NULL;

void set_error(char* error, int size, const std::string& what) {
  if (size > 0) std::snprintf(error, static_cast<std::size_t>(size), "%s", what.c_str());
}

int find_variable(const rewind_insitu_step_desc* s, const char* name) {
  for (int v = 0; v < s->n_variables; ++v)
    if (std::strcmp(s->variables[v], name) == 0) return v;
  return -1;
}

// min and max of the vorticity (2-D: omega_z; 3-D: |omega|) over this rank's leaf cells.
void local_extrema(const rewind_insitu_step_desc* s, double& lo, double& hi) {
  const int iu = find_variable(s, "u"), iv = find_variable(s, "v"), iw = find_variable(s, "w");
  const int h = s->halo;
  const long nx = s->block[0] + 2 * h, ny = s->block[1] + 2 * h;
  const long sy = nx, sz = nx * ny;  // strides along y and z
  for (std::int64_t g = 0; g < s->n_grids; ++g) {
    const rewind_insitu_grid& grid = s->grids[g];
    if (!grid.is_leaf) continue;
    const double hx = (grid.bbox[1] - grid.bbox[0]) / s->block[0];
    const double hy = (grid.bbox[3] - grid.bbox[2]) / s->block[1];
    const double hz = (grid.bbox[5] - grid.bbox[4]) / s->block[2];
    const double* u = grid.fields[iu];
    const double* v = grid.fields[iv];
    const double* w = iw >= 0 ? grid.fields[iw] : nullptr;
    for (int k = 0; k < s->block[2]; ++k)
      for (int j = 0; j < s->block[1]; ++j)
        for (int i = 0; i < s->block[0]; ++i) {
          const long c = (i + h) + sy * (j + h) + sz * (k + h);
          if (grid.cell_type && grid.cell_type[c] == 1) continue;  // inside an obstacle
          const double dvdx = (v[c + 1] - v[c - 1]) / (2.0 * hx);
          const double dudy = (u[c + sy] - u[c - sy]) / (2.0 * hy);
          double omega = dvdx - dudy;
          if (s->dim == 3) {
            const double dwdy = (w[c + sy] - w[c - sy]) / (2.0 * hy);
            const double dvdz = (v[c + sz] - v[c - sz]) / (2.0 * hz);
            const double dudz = (u[c + sz] - u[c - sz]) / (2.0 * hz);
            const double dwdx = (w[c + 1] - w[c - 1]) / (2.0 * hx);
            const double ox = dwdy - dvdz, oy = dudz - dwdx;
            omega = std::sqrt(ox * ox + oy * oy + omega * omega);
          }
          lo = std::min(lo, omega);
          hi = std::max(hi, omega);
        }
  }
}

}  // namespace

extern "C" int rewind_insitu_init(const rewind_insitu_init_info* info, char* error, int error_size) {
  comm = MPI_Comm_f2c(info->comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (info->args == nullptr || info->args[0] == '\0') {
    set_error(error, error_size, "vorticity_extrema: insitu.args must name the CSV file to write");
    return 1;
  }
  if (rank != 0) return 0;
  csv = std::fopen(info->args, "w");
  if (!csv) {
    set_error(error, error_size, std::string("vorticity_extrema: cannot write '") + info->args + "': " + std::strerror(errno));
    return 1;
  }
  std::fprintf(csv, "# case: %s; vorticity %s over leaf cells, every %lld steps\nstep,time,omega_min,omega_max\n",
               info->case_name, info->dim == 2 ? "omega_z = dv/dx - du/dy" : "magnitude |curl u|",
               static_cast<long long>(info->every));
  std::fflush(csv);
  return 0;
}

extern "C" int rewind_insitu_step(const rewind_insitu_step_desc* s, char* error, int error_size) {
  try {
    if (find_variable(s, "u") < 0 || find_variable(s, "v") < 0 || (s->dim == 3 && find_variable(s, "w") < 0)) {
      set_error(error, error_size, "vorticity_extrema: the step has no velocity (u, v, w)");
      return 1;  // the same on every rank: no rank is left in the reduction below
    }
    if (s->halo < 1) {
      set_error(error, error_size, "vorticity_extrema: needs a halo of at least one cell");
      return 1;
    }
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    local_extrema(s, lo, hi);
    double glo = lo, ghi = hi;
    MPI_Allreduce(&lo, &glo, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&hi, &ghi, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (csv) {
      std::fprintf(csv, "%lld,%.17g,%.17g,%.17g\n", static_cast<long long>(s->step), s->time, glo, ghi);
      std::fflush(csv);
    }
    return 0;
  } catch (const std::exception& e) {  // nothing above throws today; never let one cross the C boundary
    set_error(error, error_size, std::string("vorticity_extrema: ") + e.what());
    return 1;
  }
}

extern "C" int rewind_insitu_finalize(char* error, int error_size) {
  if (csv && std::fclose(csv) != 0) {
    csv = nullptr;
    set_error(error, error_size, "vorticity_extrema: closing the CSV failed");
    return 1;
  }
  csv = nullptr;
  return 0;
}
