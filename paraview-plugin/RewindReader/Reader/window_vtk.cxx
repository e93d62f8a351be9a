#include "window_vtk.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "rewind/kernel/reader.hpp"
#include "vtkCellData.h"
#include "vtkDataArraySelection.h"
#include "vtkDataSetAttributes.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkIntArray.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkMultiPieceDataSet.h"
#include "vtkRewindWindowSource.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "vtkTypeUInt64Array.h"
#include "vtkUnsignedCharArray.h"

namespace rwd::paraview {

collector::WindowRequest window_request(vtkRewindWindowSource& source, const std::array<double, 3>& lo,
                                        const std::array<double, 3>& hi) {
  collector::WindowRequest r;
  r.lo = lo;
  r.hi = hi;
  if (source.GetUseBox()) {
    const double* p = source.GetBoxPosition();
    const double* s = source.GetBoxSize();
    // A negative size spans the box the other way (the box widget allows it).
    for (int a = 0; a < 3; ++a) r.lo[a] = std::min(p[a], p[a] + s[a]), r.hi[a] = std::max(p[a], p[a] + s[a]);
  }
  r.budget = static_cast<std::uint64_t>(source.GetBudget());
  r.lod = source.GetLevelOfDetail() == 1 ? "adaptive" : "uniform";
  vtkDataArraySelection* arrays = source.GetCellArraySelection();
  for (int i = 0; i < arrays->GetNumberOfArrays(); ++i)
    if (arrays->GetArraySetting(i)) r.variables.emplace_back(arrays->GetArrayName(i));
  return r;
}

void offer_arrays(vtkDataArraySelection& selection, const std::vector<std::string>& names) {
  for (int i = selection.GetNumberOfArrays(); i-- > 0;) {
    const std::string name = selection.GetArrayName(i);
    if (std::find(names.begin(), names.end(), name) == names.end()) selection.RemoveArrayByIndex(i);
  }
  for (const auto& n : names)
    if (!selection.ArrayExists(n.c_str())) selection.EnableArray(n.c_str());
}

namespace {
template <typename Array, typename T>
vtkSmartPointer<Array> cell_array(const std::string& name, const T* values, std::uint64_t n) {
  auto a = vtkSmartPointer<Array>::New();
  a->SetName(name.c_str());
  a->SetNumberOfTuples(static_cast<vtkIdType>(n));
  std::copy_n(values, n, a->GetPointer(0));
  return a;
}

template <typename Array, typename T>
void add_field(vtkFieldData* fd, const char* name, T value) {
  auto a = vtkSmartPointer<Array>::New();
  a->SetName(name);
  a->InsertNextValue(value);
  fd->AddArray(a);
}

/// The unit of `name` in `variables` ("" when it has none or is not there).
std::string unit_of(const std::vector<collector::VariableInfo>& variables, const std::string& name) {
  const auto it = std::find_if(variables.begin(), variables.end(), [&](const auto& v) { return v.name == name; });
  return it == variables.end() ? std::string() : it->unit;
}

void set_unit(vtkDataArray* a, const std::string& unit) {
  if (!unit.empty()) a->GetInformation()->Set(vtkDataArray::UNITS_LABEL(), unit.c_str());
}

/// Solid cells (cell_type 1) marked hidden in the ghost array: ParaView does not draw
/// them and filters skip them.
void add_hidden_cells(vtkImageData* img, const std::uint8_t* types, std::uint64_t n) {
  auto ghost = vtkSmartPointer<vtkUnsignedCharArray>::New();
  ghost->SetName(vtkDataSetAttributes::GhostArrayName());
  ghost->SetNumberOfTuples(static_cast<vtkIdType>(n));
  for (std::uint64_t c = 0; c < n; ++c)
    ghost->SetValue(static_cast<vtkIdType>(c), types[c] == 1 ? vtkDataSetAttributes::HIDDENCELL : 0);
  img->GetCellData()->AddArray(ghost);
}

/// "velocity" (u, v, w; w = 0 when the reply has none) as the active vectors and
/// "velocity_magnitude", when the reply has u and v.
void add_velocity(vtkImageData* img, const std::string& unit) {
  vtkCellData* cd = img->GetCellData();
  vtkDataArray* c[3] = {cd->GetArray("u"), cd->GetArray("v"), cd->GetArray("w")};
  if (!c[0] || !c[1]) return;
  const vtkIdType n = c[0]->GetNumberOfTuples();
  auto vel = vtkSmartPointer<vtkDoubleArray>::New();
  vel->SetName("velocity");
  vel->SetNumberOfComponents(3);
  vel->SetNumberOfTuples(n);
  auto mag = vtkSmartPointer<vtkDoubleArray>::New();
  mag->SetName("velocity_magnitude");
  mag->SetNumberOfTuples(n);
  for (vtkIdType i = 0; i < n; ++i) {
    const double x[3] = {c[0]->GetComponent(i, 0), c[1]->GetComponent(i, 0), c[2] ? c[2]->GetComponent(i, 0) : 0.0};
    vel->SetTypedTuple(i, x);
    mag->SetValue(i, std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
  }
  set_unit(vel, unit);
  set_unit(mag, unit);
  cd->SetVectors(vel);
  cd->SetScalars(mag);  // what ParaView colours by when it shows the source
}

}  // namespace

std::string annotation(const collector::WindowReply& reply) {
  char time[32];
  std::snprintf(time, sizeof time, "%.6g", reply.time);
  return "step " + std::to_string(reply.step) + "  t = " + time;
}

void fill_annotation(const std::string& text, vtkTable* out) {
  out->Initialize();
  auto column = vtkSmartPointer<vtkStringArray>::New();
  column->SetName("rewind_annotation");
  column->InsertNextValue(text);
  out->AddColumn(column);
}

namespace {

/// The window's own field data: which step, level and rule, the file, the annotation,
/// the variables' units and, from the step's statistics, their colour ranges.
void add_step_fields(const collector::WindowReply& reply, const std::vector<collector::VariableInfo>& units,
                     vtkFieldData* fd) {
  add_field<vtkIdTypeArray>(fd, "rewind_step", static_cast<vtkIdType>(reply.step));
  add_field<vtkDoubleArray>(fd, "rewind_time", reply.time);
  add_field<vtkIntArray>(fd, "rewind_level", reply.level);
  add_field<vtkIntArray>(fd, "rewind_stride", reply.stride);
  add_field<vtkStringArray>(fd, "rewind_lod", reply.lod);
  add_field<vtkStringArray>(fd, "rewind_file", reply.file);
  add_field<vtkStringArray>(fd, "rewind_annotation", annotation(reply));
  auto labels = vtkSmartPointer<vtkStringArray>::New();  // "u [m/s]": titles for scalar bars
  labels->SetName("rewind_units");
  for (const auto& v : reply.variables) {
    const std::string unit = unit_of(units, v);
    std::string label = v;
    if (!unit.empty()) label.append(" [").append(unit).append("]");
    labels->InsertNextValue(label);
  }
  fd->AddArray(labels);
  // The colour range of what is shown, from the step's statistics (1.11; none without
  // them): rewind_range_<var> = {min, max}, two values, so ParaView's data information
  // (and pqRewindViewBehavior) takes the range over every piece of a parallel output.
  for (std::size_t v = 0; v < reply.ranges.size() && v < reply.variables.size(); ++v) {
    const auto& r = reply.ranges[v];
    if (!std::isfinite(r[0]) || !std::isfinite(r[1])) continue;
    auto a = vtkSmartPointer<vtkDoubleArray>::New();
    a->SetName(("rewind_range_" + reply.variables[v]).c_str());
    a->InsertNextValue(r[0]);
    a->InsertNextValue(r[1]);
    set_unit(a, unit_of(units, reply.variables[v]));
    fd->AddArray(a);
  }
}

}  // namespace

void fill_output(const collector::WindowReply& reply, bool cell_types, const collector::ServerInfo& info,
                 vtkMultiBlockDataSet* out) {
  const auto& units = info.variables;
  out->Initialize();
  int levels = reply.level + 1;
  for (const auto& p : reply.pieces) levels = std::max(levels, p.level + 1);
  out->SetNumberOfBlocks(static_cast<unsigned>(levels));
  for (int l = 0; l < levels; ++l) {
    out->SetBlock(static_cast<unsigned>(l), vtkSmartPointer<vtkMultiPieceDataSet>::New());
    out->GetMetaData(static_cast<unsigned>(l))->Set(vtkCompositeDataSet::NAME(), ("Level " + std::to_string(l)).c_str());
  }
  // A reply whose arrays do not hold its cells is an error, never a silently thinner
  // output: a missing cell-type array (a step written without one) is not.
  for (std::size_t v = 0; v < reply.values.size(); ++v)
    if (reply.values[v].size() != reply.cells)
      throw std::runtime_error("window reply: '" + (v < reply.variables.size() ? reply.variables[v] : std::string("?")) +
                               "' holds " + std::to_string(reply.values[v].size()) + " values for " +
                               std::to_string(reply.cells) + " cells");
  if (!reply.cell_type.empty() && reply.cell_type.size() != reply.cells)
    throw std::runtime_error("window reply: 'cell_type' holds " + std::to_string(reply.cell_type.size()) + " values for " +
                             std::to_string(reply.cells) + " cells");
  const bool types = cell_types && !reply.cell_type.empty();
  std::uint64_t offset = 0;
  for (const auto& p : reply.pieces) {
    auto img = vtkSmartPointer<vtkImageData>::New();
    // A 2-D case's one cell layer is a plane at the domain's lower z (cells are pixels):
    // no slab, no inner walls around a solid obstacle's hidden cells.
    const bool plane = info.dim == 2;
    img->SetDimensions(p.count[0] + 1, p.count[1] + 1, plane ? 1 : p.count[2] + 1);
    img->SetOrigin(p.origin[0], p.origin[1], plane ? info.domain_lo[2] : p.origin[2]);
    img->SetSpacing(p.spacing.data());
    const std::uint64_t n = p.cells();
    for (std::size_t v = 0; v < reply.variables.size(); ++v) {
      auto a = cell_array<vtkDoubleArray>(reply.variables[v], reply.values[v].data() + offset, n);
      set_unit(a, unit_of(units, reply.variables[v]));
      img->GetCellData()->AddArray(a);
    }
    add_velocity(img, unit_of(units, "u"));
    if (types) img->GetCellData()->AddArray(cell_array<vtkUnsignedCharArray>("cell_type", reply.cell_type.data() + offset, n));
    if (!reply.cell_type.empty()) add_hidden_cells(img, reply.cell_type.data() + offset, n);
    offset += n;
    // Which grid this is (check_window.py and users trace a block back to the file).
    vtkFieldData* id = img->GetFieldData();
    add_field<vtkIdTypeArray>(id, "rewind_row", static_cast<vtkIdType>(p.row));
    add_field<vtkTypeUInt64Array>(id, "rewind_uid", static_cast<vtkTypeUInt64>(p.uid));
    add_field<vtkIntArray>(id, "rewind_level", p.level);
    add_field<vtkIntArray>(id, "rewind_stride", p.stride);
    auto first = vtkSmartPointer<vtkIntArray>::New();
    first->SetName("rewind_first");
    first->SetNumberOfComponents(3);
    first->InsertNextTypedTuple(p.first.data());
    id->AddArray(first);
    auto* mp = vtkMultiPieceDataSet::SafeDownCast(out->GetBlock(static_cast<unsigned>(p.level)));
    mp->SetPiece(mp->GetNumberOfPieces(), img);
  }
  add_step_fields(reply, units, out->GetFieldData());
}

std::size_t step_for_time(vtkInformation* request, const std::vector<double>& times) {
  if (!request->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP())) return times.size() - 1;
  const double t = request->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, kernel::index_at_or_before(times, t)));
}

namespace {
std::vector<AxisStep> timeline_from(const std::string& file, const std::vector<collector::StepRecord>& steps,
                                    const std::map<std::string, std::string>& parents, int depth) {
  std::vector<AxisStep> own;
  for (const auto& s : steps)
    if (s.file == file) own.push_back({s.file, s.step, s.time});
  std::stable_sort(own.begin(), own.end(), [](const AxisStep& a, const AxisStep& b) { return a.time < b.time; });
  std::vector<AxisStep> out;
  const auto parent = parents.find(file);
  if (parent != parents.end() && !parent->second.empty() && depth < 64) {  // 64: a cycle ends
    out = timeline_from(parent->second, steps, parents, depth + 1);
    // The branch's first step is at its branch point: it replaces the parent's there.
    if (!own.empty()) std::erase_if(out, [&](const AxisStep& a) { return a.time >= own.front().time; });
  }
  out.insert(out.end(), own.begin(), own.end());
  return out;
}
}  // namespace

std::vector<AxisStep> live_timeline(const std::string& file, const std::vector<collector::StepRecord>& steps,
                                    const std::map<std::string, std::string>& parents) {
  return timeline_from(file, steps, parents, 0);
}

}  // namespace rwd::paraview
