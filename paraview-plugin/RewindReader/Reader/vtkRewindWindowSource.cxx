#include "vtkRewindWindowSource.h"

#include "rewind/collector/messages.hpp"
#include "vtkDataArraySelection.h"
#include "vtkDataObject.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"
#include "window_vtk.hpp"

vtkRewindWindowSource::vtkRewindWindowSource() {
  this->SetNumberOfInputPorts(0);
  this->SetNumberOfOutputPorts(2);
}

int vtkRewindWindowSource::FillOutputPortInformation(int port, vtkInformation* info) {
  if (port == 1) {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkTable");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

vtkInformation* vtkRewindWindowSource::RequestedPort(vtkInformation* request, vtkInformationVector* out) {
  const int port = request && request->Has(vtkDemandDrivenPipeline::FROM_OUTPUT_PORT())
                       ? request->Get(vtkDemandDrivenPipeline::FROM_OUTPUT_PORT())
                       : 0;
  return out->GetInformationObject(port >= 0 && port < out->GetNumberOfInformationObjects() ? port : 0);
}

void vtkRewindWindowSource::SetTimes(vtkInformationVector* out, const std::vector<double>& times) {
  for (int port = 0; port < out->GetNumberOfInformationObjects(); ++port) {
    vtkInformation* info = out->GetInformationObject(port);
    if (times.empty()) {
      info->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
      info->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
      continue;
    }
    info->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), times.data(), static_cast<int>(times.size()));
    const double range[2] = {times.front(), times.back()};
    info->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
  }
}

void vtkRewindWindowSource::SetAnnotation(vtkInformationVector* out, const std::string& text) {
  if (auto* table = vtkTable::GetData(out, 1)) rwd::paraview::fill_annotation(text, table);
}

vtkRewindWindowSource::~vtkRewindWindowSource() = default;

void vtkRewindWindowSource::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "UseBox: " << this->UseBox << "\n";
  os << indent << "BoxPosition: " << this->BoxPosition[0] << " " << this->BoxPosition[1] << " " << this->BoxPosition[2] << "\n";
  os << indent << "BoxSize: " << this->BoxSize[0] << " " << this->BoxSize[1] << " " << this->BoxSize[2] << "\n";
  os << indent << "Budget: " << this->Budget << "\n";
  os << indent << "LevelOfDetail: " << (this->LevelOfDetail == 1 ? "adaptive" : "uniform") << "\n";
  os << indent << "ReadCellTypes: " << this->ReadCellTypes << "\n";
  os << indent << "LastError: " << this->LastError << "\n";
}

vtkDataArraySelection* vtkRewindWindowSource::GetCellArraySelection() { return this->CellArrays; }

int vtkRewindWindowSource::GetNumberOfCellArrays() { return this->CellArrays->GetNumberOfArrays(); }

const char* vtkRewindWindowSource::GetCellArrayName(int index) { return this->CellArrays->GetArrayName(index); }

int vtkRewindWindowSource::GetCellArrayStatus(const char* name) { return this->CellArrays->ArrayIsEnabled(name); }

void vtkRewindWindowSource::SetCellArrayStatus(const char* name, int status) {
  if (!name || (this->CellArrays->ArrayExists(name) && this->GetCellArrayStatus(name) == (status != 0))) return;
  if (status) this->CellArrays->EnableArray(name);
  else this->CellArrays->DisableArray(name);
  this->Modified();
}

void vtkRewindWindowSource::SetDomain(const double lo[3], const double hi[3]) {
  for (int a = 0; a < 3; ++a) {
    this->DomainBounds[2 * a] = lo[a], this->DomainBounds[2 * a + 1] = hi[a];
    this->DomainExtent[2 * a] = 0, this->DomainExtent[2 * a + 1] = hi[a] - lo[a];
  }
}

void vtkRewindWindowSource::SetUnits(const std::vector<rwd::collector::VariableInfo>& variables) {
  this->VariableUnits->Reset();
  for (const auto& v : variables) {
    this->VariableUnits->InsertNextValue(v.name);
    this->VariableUnits->InsertNextValue(v.unit);
    if (v.name != "u") continue;
    for (const char* derived : {"velocity", "velocity_magnitude"}) {  // fill_output's
      this->VariableUnits->InsertNextValue(derived);
      this->VariableUnits->InsertNextValue(v.unit);
    }
  }
}

void vtkRewindWindowSource::ReportError(const std::string& message) {
  this->LastError = message;
  vtkErrorMacro(<< message);
}
