// The offline Service: sliding windows over committed steps of Rewind HDF5 files.
//
// Each request: resolve the step (kernel::Reader::find_step; "live" means "latest"),
// read its topology (cached for the last step asked), window::select the pieces, read
// only the selected rows of each variable (Reader::read_rows) and of cell_type, and
// copy each piece's cells out (window::extract). Files are opened serially (no MPI).
//
// Files still being written are followed: every steps() and window() first compares
// the file's identity, size and modification time with those it had when opened, and
// opens it afresh if they changed, so steps appear as they are committed (a step being
// written is never served: only committed steps are listed or selected). A request that
// fails on a file modified in the last 2 s (a writer in the middle of a step) is tried
// again on a fresh open for up to about 2 s before its error is reported.
//
// Not thread-safe (HDF5 as built by Debian is not): the Handler serialises calls, and
// `rewind window FILE` uses one FileService from one thread. Library target
// rewind::collector_files (kernel + window); the header itself includes neither.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "rewind/collector/handler.hpp"

namespace rwd::collector {

}  // namespace rwd::collector
namespace rwd::kernel {
struct CommonInfo;
}
namespace rwd::collector {

/// What a run's /common says about it, as the collector describes it (no files, not
/// live): variables, domain, dimension, block, refinement. Pure.
ServerInfo server_info_of(const kernel::CommonInfo& common);

class FileService final : public Service {
 public:
  /// Opens every file read-only. files[0] is the default of WindowRequest::file. All
  /// files must share variables and geometry (a run and its branches); throws
  /// kernel::FileError if a file cannot be opened, std::invalid_argument if the list is
  /// empty or the files disagree.
  explicit FileService(const std::vector<std::string>& files);
  ~FileService() override;
  FileService(const FileService&) = delete;
  FileService& operator=(const FileService&) = delete;

  ServerInfo info() override;
  /// The committed steps of every file, file by file, each in time order, as the files
  /// are now; files[0]'s through its parents when it is a branch (its parents' steps up to
  /// the branch point first, each naming its file: docs/file-format.md §6, "A branch's
  /// timeline"). A window without a file picks its step on that timeline; a file the
  /// steps name is accepted as WindowRequest::file.
  std::vector<StepRecord> steps() override;
  /// Throws ServiceError: no_such_step (selector names no committed step),
  /// unknown_variable (not stored in that step), bad_argument (unknown file).
  WindowReply window(const WindowRequest& request) override;

  /// What a window asks beyond the protocol's WindowRequest (the ParaView reader's
  /// level-of-detail cap and its share of the pieces when ParaView reads in parallel).
  struct WindowOptions {
    int max_level = -1;  ///< window::Window::max_level: deepest level returned, -1 none
    int piece = 0;       ///< return only share `piece` of `pieces` of the selected
    int pieces = 1;      ///< pieces (contiguous in row order); the reply's level,
                         ///< stride and box stay those of the whole selection
    bool stored_only = false;  ///< leave out requested variables the step does not store
                               ///< (reply.variables says which) instead of throwing
  };
  /// window(request) with `options`; request.budget 0 = unlimited (the Handler refuses 0
  /// on the wire, a local caller may ask for it). Throws as window(request), and
  /// std::invalid_argument for a share outside 0 <= piece < pieces.
  WindowReply window(const WindowRequest& request, const WindowOptions& options);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd::collector
