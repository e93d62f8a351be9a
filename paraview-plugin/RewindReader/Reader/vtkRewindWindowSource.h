// vtkRewindWindowSource: what the Rewind file reader and the live source share -- the
// sliding window (box, budget, cell arrays) and the output they build from a window
// reply. Abstract; not a proxy of its own.
//
// Window properties (docs/paraview.md):
//   UseBox       0: the whole domain (default); 1: the box below
//   BoxPosition  lower corner of the box (x, y, z)
//   BoxSize      extent of the box per axis; 0 on an axis = a slice there
//   Budget       most cell values per variable (0 = unlimited / the server's cap);
//                the window returns the finest level whose cells in the box fit it
//   LevelOfDetail 0 uniform (the paper's rule: one level over the box), 1 adaptive
//                (refined where the first variable changes most; needs the step's
//                statistics, else the uniform rule answers: field data rewind_lod)
//   CellArrays   which variables to return (an array-selection property)
//   CellTypes    also return the cell type (boundary condition code) of every cell
// Position and size are the Position / Scale of ParaView's box widget.
//
// Output: a vtkMultiBlockDataSet with one block per level ("Level N"), each a
// vtkMultiPieceDataSet of vtkImageData (one per selected grid, cropped to the box) with
// cell data (the variables with their units, velocity and velocity_magnitude, solid
// cells hidden through vtkGhostType: rwd::paraview::fill_output); its field data says
// which step was shown (rewind_step, rewind_time, rewind_level, rewind_stride,
// rewind_lod, rewind_file, rewind_annotation). A second output port, "Annotation", is a one-cell
// vtkTable with the step and time shown ("step N  t = T"): the proxies' XML marks it as
// text, so the GUI draws it in the view's corner when the source is applied. Errors are
// reported with vtkErrorMacro (one message) and kept in LastError; nothing throws into VTK.
#ifndef vtkRewindWindowSource_h
#define vtkRewindWindowSource_h

#include <string>
#include <vector>

#include "RewindReadersModule.h"
#include "vtkMultiBlockDataSetAlgorithm.h"
#include "vtkNew.h"

#include "vtkDataArraySelection.h"  // vtkNew member
#include "vtkStringArray.h"         // vtkNew member

namespace rwd {
namespace collector {
struct VariableInfo;
}
}  // namespace rwd

class REWINDREADERS_EXPORT vtkRewindWindowSource : public vtkMultiBlockDataSetAlgorithm {
 public:
  vtkTypeMacro(vtkRewindWindowSource, vtkMultiBlockDataSetAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  vtkSetMacro(UseBox, vtkTypeBool);
  vtkGetMacro(UseBox, vtkTypeBool);
  vtkBooleanMacro(UseBox, vtkTypeBool);
  vtkSetVector3Macro(BoxPosition, double);
  vtkGetVector3Macro(BoxPosition, double);
  vtkSetVector3Macro(BoxSize, double);
  vtkGetVector3Macro(BoxSize, double);
  vtkSetClampMacro(Budget, int, 0, VTK_INT_MAX);
  vtkGetMacro(Budget, int);
  vtkSetClampMacro(LevelOfDetail, int, 0, 1);
  vtkGetMacro(LevelOfDetail, int);
  vtkSetMacro(ReadCellTypes, vtkTypeBool);
  vtkGetMacro(ReadCellTypes, vtkTypeBool);
  vtkBooleanMacro(ReadCellTypes, vtkTypeBool);

  /// The cell arrays (variables) on offer and which are enabled (all by default).
  vtkDataArraySelection* GetCellArraySelection();
  int GetNumberOfCellArrays();
  const char* GetCellArrayName(int index);
  int GetCellArrayStatus(const char* name);
  void SetCellArrayStatus(const char* name, int status);

  /// The domain, known after RequestInformation (the reader; the live source once it has
  /// connected): xmin xmax ymin ymax zmin zmax, and 0 extent_x 0 extent_y 0 extent_z.
  /// Their XML information properties are the ranges whose minimum (BoxPosition) and
  /// maximum (BoxSize) are the box widget's defaults, so the box starts on the domain.
  vtkGetVector6Macro(DomainBounds, double);
  vtkGetVector6Macro(DomainExtent, double);
  /// Pairs (array name, unit) of the cell arrays on offer (and velocity,
  /// velocity_magnitude), known with them: what the GUI puts in scalar bar titles.
  vtkStringArray* GetVariableUnits() { return this->VariableUnits; }

  /// The last error reported ("" after a successful update).
  const char* GetLastError() { return this->LastError.c_str(); }

 protected:
  vtkRewindWindowSource();
  ~vtkRewindWindowSource() override;

  /// Port 0: the window (vtkMultiBlockDataSet); port 1: the annotation (vtkTable).
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  /// The output information of the port this update was asked for (its time, its piece).
  static vtkInformation* RequestedPort(vtkInformation* request, vtkInformationVector* out);
  /// Sets both ports' time steps and range (`times`: ascending; empty: none).
  static void SetTimes(vtkInformationVector* out, const std::vector<double>& times);
  /// Sets the Annotation port's text.
  static void SetAnnotation(vtkInformationVector* out, const std::string& text);

  /// Reports `message` once (vtkErrorMacro) and keeps it in LastError.
  void ReportError(const std::string& message);
  void ClearError() { this->LastError.clear(); }
  /// Sets DomainBounds and DomainExtent from the domain's corners.
  void SetDomain(const double lo[3], const double hi[3]);
  /// Sets VariableUnits from the variables on offer.
  void SetUnits(const std::vector<rwd::collector::VariableInfo>& variables);

  vtkTypeBool UseBox = 0;
  double BoxPosition[3] = {0, 0, 0};
  double BoxSize[3] = {1, 1, 1};
  int Budget = 0;
  int LevelOfDetail = 0;  ///< 0 uniform, 1 adaptive
  vtkTypeBool ReadCellTypes = 1;
  vtkNew<vtkDataArraySelection> CellArrays;
  std::string LastError;
  double DomainBounds[6] = {0, 1, 0, 1, 0, 1};
  double DomainExtent[6] = {0, 1, 0, 1, 0, 1};
  vtkNew<vtkStringArray> VariableUnits;

 private:
  vtkRewindWindowSource(const vtkRewindWindowSource&) = delete;
  void operator=(const vtkRewindWindowSource&) = delete;
};

#endif
