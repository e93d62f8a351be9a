// vtkRewindReader: reads a Rewind run file into ParaView, through the same window code
// as the collector (collector::FileService: window::select, then only the selected rows).
//
// Time: every committed step on ParaView's time axis; for a branch file the parent's
// steps up to the branch point come first (kernel::timeline), so the timeline is
// continuous across branches. A requested time shows the last step at or before it
// (kernel::index_at_or_before, the rule of Reader::find_step("t=T")); a time before the
// first step shows the first.
//
// Window (vtkRewindWindowSource): box, budget, cell arrays, cell types. MaximumLevel caps
// the level of detail: with the whole domain and budget 0 it is the old level cut (the
// grids on that level plus the leaves above it; -1: the finest leaves, which tile the
// domain).
//
// In parallel (pvbatch / pvserver) every piece returns a contiguous share of the
// selected grids.
#ifndef vtkRewindReader_h
#define vtkRewindReader_h

#include <memory>

#include "vtkRewindWindowSource.h"

class REWINDREADERS_EXPORT vtkRewindReader : public vtkRewindWindowSource {
 public:
  static vtkRewindReader* New();
  vtkTypeMacro(vtkRewindReader, vtkRewindWindowSource);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  vtkSetStringMacro(FileName);
  vtkGetStringMacro(FileName);
  vtkSetClampMacro(MaximumLevel, int, -1, VTK_INT_MAX);
  vtkGetMacro(MaximumLevel, int);

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
  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
