// An in-situ hook (rewind/insitu.h) that hands every step it is given to ParaView
// Catalyst (the legacy vtkCPProcessor API of ParaView 5.11, as Damaris does for
// Code_Saturne), running a Catalyst Python script of the kind ParaView's GUI exports
// (Catalyst > Export Catalyst Script: "script-version: 2.0", or the older
// coprocessing style: vtkCPPythonPipeline detects which).
//
//   [insitu]
//   library = "build/lib/rewind-insitu/librewind_insitu_catalyst.so"
//   every = 5
//   args = "insitu/catalyst/scripts/extract_vtpd.py"   # the Catalyst script
//
// The script sees one channel, "input": a vtkPartitionedDataSet with one vtkImageData
// per leaf grid of the rank (parents overlap their children and are left out). Each
// image covers the grid's padded block — the halo cells too, marked as ghost cells
// (vtkGhostType = DUPLICATECELL) — so the cell arrays point straight into the
// simulation's arrays (zero-copy): u, v, w, p, T, velocity (three components, SOA over
// u, v, w) and cell_type. A 2-D run gives 2-D images (the z = 0 plane with its x, y
// halo). Grid spacing, origin and uid (field data "uid", "level") come from the step.
#include <Python.h>  // first, as Python asks
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>
#include <rewind/insitu.h>

#include <vtkCPDataDescription.h>
#include <vtkCPInputDataDescription.h>
#include <vtkCPProcessor.h>
#include <vtkCPPythonPipeline.h>
#include <vtkCellData.h>
#include <vtkDataSetAttributes.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkIntArray.h>
#include <vtkMPI.h>
#include <vtkNew.h>
#include <vtkPartitionedDataSet.h>
#include <vtkSOADataArrayTemplate.h>
#include <vtkSmartPointer.h>
#include <vtkTypeUInt64Array.h>
#include <vtkUnsignedCharArray.h>
#include <vtk_loguru.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

REWIND_INSITU_DEFINE_ABI_VERSION()

namespace {

MPI_Comm comm = MPI_COMM_NULL;  // kept alive: Catalyst holds a pointer to it
vtkCPProcessor* processor = nullptr;
std::string script;
vtkSmartPointer<vtkUnsignedCharArray> ghosts;  // the same for every grid of a run

void set_error(char* error, int size, const std::string& what) {
  if (size > 0) std::snprintf(error, static_cast<std::size_t>(size), "catalyst: %s", what.c_str());
}

// The hook is loaded RTLD_LOCAL; Python extension modules (numpy, ParaView's own)
// expect libpython's symbols in the global scope, as in a python executable. The
// hook links libpython (Debian's VTK Python libraries do not), so this names it.
void make_python_global() {
  Dl_info py{};
  if (dladdr(reinterpret_cast<void*>(&Py_IsInitialized), &py) != 0 && py.dli_fname)
    dlopen(py.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

// VTK's logger (loguru) colours its stderr lines whenever TERM names a colour terminal,
// even when stderr is a file or a pipe (a job's log); plain lines there. loguru's own
// switch for it (g_colorlogtostderr), set before Catalyst starts logging.
void plain_log_unless_terminal() {
  if (isatty(STDERR_FILENO) == 0) loguru::g_colorlogtostderr = false;
}

// Points per axis of a padded block's image (2-D: one point in z, pixel cells).
void image_shape(const rewind_insitu_step_desc* s, int dims[3], vtkIdType& cells) {
  const int h = s->halo;
  dims[0] = s->block[0] + 2 * h + 1;
  dims[1] = s->block[1] + 2 * h + 1;
  dims[2] = s->dim == 2 ? 1 : s->block[2] + 2 * h + 1;
  cells = vtkIdType{dims[0] - 1} * (dims[1] - 1) * (s->dim == 2 ? 1 : dims[2] - 1);
}

// 1 (DUPLICATECELL) on every halo cell, 0 inside; one array shared by all images.
vtkSmartPointer<vtkUnsignedCharArray> make_ghosts(const rewind_insitu_step_desc* s) {
  int dims[3];
  vtkIdType cells = 0;
  image_shape(s, dims, cells);
  const int h = s->halo, nx = dims[0] - 1, ny = dims[1] - 1, nz = s->dim == 2 ? 1 : dims[2] - 1;
  auto a = vtkSmartPointer<vtkUnsignedCharArray>::New();
  a->SetName(vtkDataSetAttributes::GhostArrayName());
  a->SetNumberOfTuples(cells);
  vtkIdType c = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const bool halo = i < h || i >= nx - h || j < h || j >= ny - h || (s->dim == 3 && (k < h || k >= nz - h));
        a->SetValue(c++, halo ? vtkDataSetAttributes::DUPLICATECELL : 0);
      }
  return a;
}

vtkSmartPointer<vtkPartitionedDataSet> describe(const rewind_insitu_step_desc* s) {
  int dims[3];
  vtkIdType cells = 0;
  image_shape(s, dims, cells);
  const vtkIdType plane = vtkIdType{s->block[0] + 2 * s->halo} * (s->block[1] + 2 * s->halo);
  const vtkIdType offset = s->dim == 2 ? plane * s->halo : 0;  // 2-D: the interior z plane
  if (!ghosts || ghosts->GetNumberOfTuples() != cells) ghosts = make_ghosts(s);
  int iu = -1, iv = -1, iw = -1;
  for (int v = 0; v < s->n_variables; ++v) {
    if (std::strcmp(s->variables[v], "u") == 0) iu = v;
    if (std::strcmp(s->variables[v], "v") == 0) iv = v;
    if (std::strcmp(s->variables[v], "w") == 0) iw = v;
  }
  auto out = vtkSmartPointer<vtkPartitionedDataSet>::New();
  unsigned int part = 0;
  for (std::int64_t g = 0; g < s->n_grids; ++g) {
    const rewind_insitu_grid& grid = s->grids[g];
    if (!grid.is_leaf) continue;
    vtkNew<vtkImageData> image;
    double spacing[3], origin[3];
    for (int a = 0; a < 3; ++a) {
      spacing[a] = (grid.bbox[2 * a + 1] - grid.bbox[2 * a]) / s->block[a];
      origin[a] = grid.bbox[2 * a] - (s->dim == 2 && a == 2 ? 0.0 : s->halo * spacing[a]);
    }
    image->SetDimensions(dims);
    image->SetSpacing(spacing);
    image->SetOrigin(origin);
    vtkCellData* cd = image->GetCellData();
    for (int v = 0; v < s->n_variables; ++v) {
      vtkNew<vtkDoubleArray> a;
      a->SetName(s->variables[v]);
      // Zero-copy (save = 1: VTK never frees or writes it; the pointer lives for this call).
      a->SetArray(const_cast<double*>(grid.fields[v]) + offset, cells, 1);
      cd->AddArray(a);
    }
    if (iu >= 0 && iv >= 0 && iw >= 0) {
      vtkNew<vtkSOADataArrayTemplate<double>> vel;
      vel->SetName("velocity");
      vel->SetNumberOfComponents(3);
      const int comps[3] = {iu, iv, iw};
      for (int c = 0; c < 3; ++c)
        vel->SetArray(c, const_cast<double*>(grid.fields[comps[c]]) + offset, cells, c == 2, true);
      cd->AddArray(vel);
      cd->SetActiveVectors("velocity");
    }
    if (grid.cell_type) {
      vtkNew<vtkUnsignedCharArray> t;
      t->SetName("cell_type");
      t->SetArray(const_cast<unsigned char*>(grid.cell_type) + offset, cells, 1);
      cd->AddArray(t);
    }
    cd->AddArray(ghosts);
    vtkNew<vtkTypeUInt64Array> uid;
    uid->SetName("uid");
    uid->InsertNextValue(grid.uid);
    image->GetFieldData()->AddArray(uid);
    vtkNew<vtkIntArray> level;
    level->SetName("level");
    level->InsertNextValue(grid.level);
    image->GetFieldData()->AddArray(level);
    out->SetPartition(part++, image);
  }
  return out;
}

}  // namespace

extern "C" int rewind_insitu_init(const rewind_insitu_init_info* info, char* error, int error_size) {
  try {
    script = info->args ? info->args : "";
    if (script.empty()) {
      set_error(error, error_size, "insitu.args must name a Catalyst Python script");
      return 1;
    }
    if (!std::filesystem::is_regular_file(script)) {
      set_error(error, error_size, "Catalyst script '" + script + "' does not exist");
      return 1;
    }
    make_python_global();
    plain_log_unless_terminal();
    comm = MPI_Comm_f2c(info->comm);
    vtkMPICommunicatorOpaqueComm opaque(&comm);
    processor = vtkCPProcessor::New();
    if (processor->Initialize(opaque) == 0) {
      set_error(error, error_size, "vtkCPProcessor::Initialize failed");
      return 1;
    }
    auto pipeline = vtkCPPythonPipeline::CreateAndInitializePipeline(script.c_str(), 2);
    if (!pipeline) {
      set_error(error, error_size, "the Catalyst script '" + script + "' failed to load (its Python error is above)");
      return 1;
    }
    processor->AddPipeline(pipeline);
    return 0;
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
    return 1;
  }
}

extern "C" int rewind_insitu_step(const rewind_insitu_step_desc* s, char* error, int error_size) {
  try {
    vtkNew<vtkCPDataDescription> dd;
    dd->AddInput("input");
    dd->SetTimeData(s->time, s->step);
    if (processor->RequestDataDescription(dd) == 0) return 0;  // the script wants nothing now
    auto data = describe(s);
    dd->GetInputDescriptionByName("input")->SetGrid(data);
    if (processor->CoProcess(dd) == 0) {
      set_error(error, error_size, "the Catalyst script '" + script + "' failed (its Python error is above)");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
    return 1;
  }
}

extern "C" int rewind_insitu_finalize(char* error, int error_size) {
  (void)error;
  (void)error_size;
  if (processor) {
    processor->Finalize();
    processor->Delete();
    processor = nullptr;
  }
  ghosts = nullptr;
  return 0;
}
