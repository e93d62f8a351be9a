#include "vtkRewindReader.h"

#include <algorithm>
#include <array>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/collector/file_service.hpp"
#include "rewind/kernel/lineage.hpp"
#include "rewind/kernel/reader.hpp"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkObjectFactory.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"
#include "window_vtk.hpp"

vtkStandardNewMacro(vtkRewindReader);

namespace k = rwd::kernel;
namespace col = rwd::collector;

struct vtkRewindReader::Internals {
  std::vector<k::TimelineEntry> Timeline;  ///< the file's steps, the parents' before the branch
  std::vector<double> Times;               ///< Timeline's times, ascending
  std::unique_ptr<col::FileService> Service;
  col::ServerInfo Info;  ///< the domain, its dimension, the variables with their units
};

vtkRewindReader::vtkRewindReader() : Internal(new Internals) {}

vtkRewindReader::~vtkRewindReader() { this->SetFileName(nullptr); }

void vtkRewindReader::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FileName: " << (this->FileName ? this->FileName : "(none)") << "\n";
  os << indent << "MaximumLevel: " << this->MaximumLevel << "\n";
}

int vtkRewindReader::CanReadFile(const char* name) {
  if (!name) return 0;
  try {
    (void)k::Reader::open(name);
    return 1;
  } catch (...) {
    return 0;
  }
}

int vtkRewindReader::RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector* out) {
  auto& in = *this->Internal;
  in = Internals{};
  if (!this->FileName || !*this->FileName) {
    this->ReportError("No file name set.");
    return 1;
  }
  try {
    // One timeline across branches: equal times (a branch's first step at its branch
    // point) keep the later entry, as index_at_or_before would pick it anyway.
    for (auto& e : k::timeline(this->FileName)) {
      if (!in.Times.empty() && e.step.time <= in.Times.back()) {
        in.Timeline.back() = std::move(e);
        continue;
      }
      in.Times.push_back(e.step.time);
      in.Timeline.push_back(std::move(e));
    }
    if (in.Timeline.empty()) throw std::runtime_error(std::string(this->FileName) + ": no committed step to show");
    std::vector<std::string> files{this->FileName};
    for (const auto& e : in.Timeline)
      if (std::find(files.begin(), files.end(), e.path) == files.end()) files.push_back(e.path);
    in.Service = std::make_unique<col::FileService>(files);
    const auto info = in.Service->info();
    in.Info = info;
    this->SetUnits(info.variables);
    this->SetDomain(info.domain_lo.data(), info.domain_hi.data());
    std::vector<std::string> names;
    for (const auto& v : info.variables) names.push_back(v.name);
    rwd::paraview::offer_arrays(*this->CellArrays, names);
  } catch (const std::exception& e) {
    in = Internals{};
    this->ReportError(e.what());
    return 1;
  }
  SetTimes(out, in.Times);
  out->GetInformationObject(0)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  return 1;
}

int vtkRewindReader::RequestData(vtkInformation* pipeline_request, vtkInformationVector**, vtkInformationVector* out) {
  vtkInformation* info = RequestedPort(pipeline_request, out);
  auto* output = vtkMultiBlockDataSet::GetData(out, 0);
  const auto& in = *this->Internal;
  if (!output || !in.Service) return 1;  // RequestInformation reported why

  const auto& entry = in.Timeline[rwd::paraview::step_for_time(info, in.Times)];

  col::FileService::WindowOptions opt;
  opt.max_level = this->MaximumLevel;
  opt.stored_only = true;
  if (info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()))
    opt.piece = info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  if (info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES()))
    opt.pieces = std::max(1, info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES()));
  try {
    auto request = rwd::paraview::window_request(*this, in.Info.domain_lo, in.Info.domain_hi);
    request.time = std::to_string(entry.step.step);
    request.file = entry.path;
    const auto reply = in.Service->window(request, opt);
    rwd::paraview::fill_output(reply, this->ReadCellTypes, in.Info, output);
    // The code's named scalars of the step (its monitors: drag, energy, ...), one field
    // data value each under its own name (format 1.8; none in older files).
    for (const auto& s : entry.step.scalars) {
      auto a = vtkSmartPointer<vtkDoubleArray>::New();
      a->SetName(s.name.c_str());
      a->InsertNextValue(s.value);
      output->GetFieldData()->AddArray(a);
    }
    SetAnnotation(out, rwd::paraview::annotation(reply));
  } catch (const std::exception& e) {
    output->Initialize();
    SetAnnotation(out, "");
    this->ReportError(entry.path + " step " + std::to_string(entry.step.step) + ": " + e.what());
    return 1;
  }
  output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), entry.step.time);
  if (auto* table = vtkTable::GetData(out, 1)) table->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), entry.step.time);
  this->ClearError();
  return 1;
}
