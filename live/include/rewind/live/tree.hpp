// The whole tree of a running job as its collector needs it to select windows, when no
// neighbourhood server holds it: every compute rank's grids gathered on compute rank 0
// (the C API's runs, `rewind run --listen` on 1-2 processes), in the rows of a file's
// step (level-major, sorted by level, rank, sort_key) with the owner of each row.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/window/select.hpp"

namespace rwd::live {

struct TreeSnapshot {
  std::string file;  ///< the future whose tree it is (Status::file when it was gathered)
  kernel::BlockShape block;
  kernel::StepTopology topo;
  std::vector<std::int32_t> owner;  ///< compute rank of each row
};

/// One selected grid with its owner.
struct SelectedPiece {
  std::uint64_t uid = 0;
  std::int32_t owner = 0;
  window::Piece piece;
};
/// A window's selection over the whole tree: window::Selection with owners.
struct Selection {
  int level = 0, stride = 1;
  window::Lod lod = window::Lod::uniform;  ///< the rule that answered
  window::Box covered = window::kZeroBox;
  std::vector<SelectedPiece> pieces;
};

/// Collective over `compute`: every rank's grids (records only, no cell data) gathered on
/// rank 0, which gets the snapshot; the other ranks get nothing. Throws
/// std::invalid_argument (on every rank) for a tree without exactly one root or with a
/// child described on no rank.
std::optional<TreeSnapshot> gather_tree(MPI_Comm compute, const kernel::LocalGrids& grids);

/// The trees a collector keeps: one per future (its file), so a window of any future
/// selects on the tree that future computes on. Not thread-safe (its owner locks).
class TreeStore {
 public:
  void put(std::shared_ptr<const TreeSnapshot> t);
  /// The tree of the future writing `file`; "" or a file with none: the latest put.
  [[nodiscard]] std::shared_ptr<const TreeSnapshot> get(const std::string& file) const;

 private:
  std::vector<std::shared_ptr<const TreeSnapshot>> trees_;  ///< latest last, one per file
};
/// window::select on the snapshot, with owners; `detail`: one variable's detail of each
/// row (adaptive windows; empty: none, an adaptive window answers with the uniform rule);
/// `shares`: its octants' shares, max_children per row (empty: none, whole grids). Pure.
Selection select(const TreeSnapshot& tree, const window::Window& w, std::span<const double> detail = {},
                 std::span<const double> shares = {});

/// The snapshot as a live-link frame (type kTreeType; messages.hpp), for a collector on
/// another rank, and back (child and parent rows rebuilt). decode_tree throws
/// wire::WireError on anything malformed.
inline constexpr std::uint16_t kTreeType = 66;
std::vector<std::byte> encode(const TreeSnapshot& t);
TreeSnapshot decode_tree(std::span<const std::byte> frame);

}  // namespace rwd::live
