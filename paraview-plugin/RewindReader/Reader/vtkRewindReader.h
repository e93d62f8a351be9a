// vtkRewindReader: reads a Rewind run file into ParaView.
//
// Output: a vtkMultiBlockDataSet with one block per level ("Level N"), each holding one
// vtkImageData per grid of the level-of-detail cut: the grids on MaximumLevel plus
// the leaves above it (MaximumLevel = -1: all leaves, which tile the domain). This is
// the paper's offline sliding-window traversal: walk child rows from row 0 and read
// only the visited rows. Time steps are the file's committed steps.
//
// In parallel (pvbatch / pvserver) every piece reads a contiguous share of the
// selected rows. Errors are reported with vtkErrorMacro; nothing throws into VTK.
#ifndef vtkRewindReader_h
#define vtkRewindReader_h

#include <memory>

#include "RewindReadersModule.h"
#include "vtkMultiBlockDataSetAlgorithm.h"

class REWINDREADERS_EXPORT vtkRewindReader : public vtkMultiBlockDataSetAlgorithm {
 public:
  static vtkRewindReader* New();
  vtkTypeMacro(vtkRewindReader, vtkMultiBlockDataSetAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  vtkSetStringMacro(FileName);
  vtkGetStringMacro(FileName);
  vtkSetMacro(MaximumLevel, int);
  vtkGetMacro(MaximumLevel, int);
  vtkSetMacro(ReadCellTypes, vtkTypeBool);
  vtkGetMacro(ReadCellTypes, vtkTypeBool);
  vtkBooleanMacro(ReadCellTypes, vtkTypeBool);

  /// 1 if `name` is a Rewind run file this reader understands.
  static int CanReadFile(const char* name);

 protected:
  vtkRewindReader();
  ~vtkRewindReader() override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

 private:
  vtkRewindReader(const vtkRewindReader&) = delete;
  void operator=(const vtkRewindReader&) = delete;

  char* FileName = nullptr;
  int MaximumLevel = -1;
  vtkTypeBool ReadCellTypes = 1;
  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
