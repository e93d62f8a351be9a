#include "vtkRewindReader.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "rewind/kernel/reader.hpp"
#include "rewind/window/kernel_view.hpp"
#include "rewind/window/select.hpp"
#include "vtkCellData.h"
#include "vtkDoubleArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkMultiPieceDataSet.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkUnsignedCharArray.h"

vtkStandardNewMacro(vtkRewindReader);

struct vtkRewindReader::Internals {
  std::vector<rwd::kernel::StepEntry> Steps;
};

vtkRewindReader::vtkRewindReader() : Internal(new Internals) { this->SetNumberOfInputPorts(0); }

vtkRewindReader::~vtkRewindReader() { this->SetFileName(nullptr); }

void vtkRewindReader::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FileName: " << (this->FileName ? this->FileName : "(none)") << "\n";
  os << indent << "MaximumLevel: " << this->MaximumLevel << "\n";
  os << indent << "ReadCellTypes: " << this->ReadCellTypes << "\n";
}

int vtkRewindReader::CanReadFile(const char* name) {
  if (!name) return 0;
  try {
    (void)rwd::kernel::Reader::open(name);
    return 1;
  } catch (...) {
    return 0;
  }
}

int vtkRewindReader::RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector* out) {
  if (!this->FileName) {
    vtkErrorMacro("No file name set.");
    return 0;
  }
  try {
    const auto reader = rwd::kernel::Reader::open(this->FileName);
    this->Internal->Steps = reader.steps(/*committed_only=*/true);
  } catch (const std::exception& e) {
    vtkErrorMacro(<< e.what());
    return 0;
  }
  const auto& steps = this->Internal->Steps;
  if (steps.empty()) {
    vtkErrorMacro(<< this->FileName << ": no committed step to show");
    return 0;
  }
  std::vector<double> times;
  for (const auto& s : steps) times.push_back(s.time);
  vtkInformation* info = out->GetInformationObject(0);
  info->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), times.data(), static_cast<int>(times.size()));
  double range[2] = {times.front(), times.back()};
  info->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
  info->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  return 1;
}


int vtkRewindReader::RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector* out) {
  vtkInformation* info = out->GetInformationObject(0);
  auto* output = vtkMultiBlockDataSet::GetData(info);
  const auto& steps = this->Internal->Steps;
  if (!output || steps.empty()) return 0;

  // The step nearest the requested time.
  std::size_t pick = steps.size() - 1;
  if (info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP())) {
    const double t = info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
    double best = HUGE_VAL;
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (std::abs(steps[i].time - t) < best) best = std::abs(steps[i].time - t), pick = i;
  }
  const int piece = info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER())
                        ? info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()) : 0;
  const int pieces = info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES())
                         ? std::max(1, info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES())) : 1;

  try {
    const auto reader = rwd::kernel::Reader::open(this->FileName);
    const auto& common = reader.common();
    const auto step = steps[pick].step;
    const auto topo = reader.read_topology(step);
    // The level-of-detail cut (grids on MaximumLevel plus leaves above it), by the same
    // window module the offline and live windows use; only these rows are read.
    const auto all_rows = rwd::window::level_cut(rwd::window::view_of(topo, common.block), this->MaximumLevel);
    // This piece's contiguous share of the selected rows.
    const auto n = static_cast<std::int64_t>(all_rows.size());
    const std::vector<std::int64_t> rows(all_rows.begin() + n * piece / pieces,
                                         all_rows.begin() + n * (piece + 1) / pieces);
    const auto block = common.block;
    const std::int64_t cells = block.cells();

    std::vector<vtkSmartPointer<vtkImageData>> images;
    for (const auto r : rows) {
      const auto& b = topo.bbox[static_cast<std::size_t>(r)];
      auto img = vtkSmartPointer<vtkImageData>::New();
      img->SetDimensions(block.sx + 1, block.sy + 1, block.sz + 1);
      img->SetOrigin(b[0], b[2], b[4]);
      img->SetSpacing((b[1] - b[0]) / block.sx, (b[3] - b[2]) / block.sy, (b[5] - b[4]) / block.sz);
      images.push_back(img);
    }
    std::vector<double> buf(static_cast<std::size_t>(cells) * rows.size());
    for (const auto& f : reader.fields(step)) {
      if (f.group != "cell_data") continue;
      reader.read_rows(step, f.group, f.name, rows, buf.data());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        auto arr = vtkSmartPointer<vtkDoubleArray>::New();
        arr->SetName(f.name.c_str());
        arr->SetNumberOfTuples(cells);
        std::copy_n(buf.data() + i * static_cast<std::size_t>(cells), cells, arr->GetPointer(0));
        images[i]->GetCellData()->AddArray(arr);
      }
    }
    if (this->ReadCellTypes) {
      bool has_types = true;
      std::vector<std::uint8_t> types(static_cast<std::size_t>(cells) * rows.size());
      try {
        reader.read_cell_types(step, rows, types.data());
      } catch (const std::exception&) {
        has_types = false;  // a visualisation step may omit cell types
      }
      for (std::size_t i = 0; has_types && i < rows.size(); ++i) {
        auto arr = vtkSmartPointer<vtkUnsignedCharArray>::New();
        arr->SetName("cell_type");
        arr->SetNumberOfTuples(cells);
        std::copy_n(types.data() + i * static_cast<std::size_t>(cells), cells, arr->GetPointer(0));
        images[i]->GetCellData()->AddArray(arr);
      }
    }
    // One block per level, one piece per grid.
    const int levels = topo.n_levels();
    output->SetNumberOfBlocks(static_cast<unsigned>(levels));
    for (int l = 0; l < levels; ++l) {
      auto mp = vtkSmartPointer<vtkMultiPieceDataSet>::New();
      output->SetBlock(static_cast<unsigned>(l), mp);
      output->GetMetaData(static_cast<unsigned>(l))->Set(vtkCompositeDataSet::NAME(), ("Level " + std::to_string(l)).c_str());
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto* mp = vtkMultiPieceDataSet::SafeDownCast(output->GetBlock(static_cast<unsigned>(topo.level[static_cast<std::size_t>(rows[i])])));
      mp->SetPiece(mp->GetNumberOfPieces(), images[i]);
    }
    output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), steps[pick].time);
  } catch (const std::exception& e) {
    vtkErrorMacro(<< e.what());
    return 0;
  }
  return 1;
}
