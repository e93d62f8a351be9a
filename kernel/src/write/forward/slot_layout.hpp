// Private: what a client's slot of the shared memory holds for one step, and how a step's
// grids are packed into it and described on the wire (forward.hpp). Pure: no MPI call;
// tests/kernel/test_forward_wire.cpp checks it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "write/forward/handoff_wire.hpp"
#include "rewind/kernel/grids.hpp"
#include "rewind/kernel/writer.hpp"

namespace rwd::kernel::detail {

/// What a client's slot holds for one step: the arrays of these GridRecord::fields slots
/// (ascending, each once), whole with their halos or interiors only, then the cell types
/// (the same extent) if `types`.
struct SlotLayout {
  std::vector<int> slots;
  bool padded = false;
  bool types = false;
};
/// The layout of a step: info.fields' arrays and cell types (info.write_cell_type) if
/// `write`, the consumer's arrays and cell types if `consume`; padded when consumed.
SlotLayout slot_layout(const StepInfo& info, bool write, const std::vector<FieldSpec>* consume);
/// Bytes of one client's step in its slot.
std::int64_t slot_bytes(const SlotLayout& layout, const LocalGrids& grids);
/// Copies the arrays into `slot` (the layout slot_bytes measures; `copy` false: they are
/// there already, a span's) and appends the layout and the grids' metadata to `msg`;
/// `rank` (the sender's compute rank) becomes every grid's GridRecord::rank on the writer.
void pack_step(const SlotLayout& layout, const LocalGrids& grids, int rank, std::byte* slot, Packer& msg,
               bool copy = true);
/// `like`'s grids with their arrays in `slot` as pack_step lays them out (a write-only
/// layout: interiors, halo 0): Writer::span.
LocalGrids slot_grids(const SlotLayout& layout, const LocalGrids& like, std::byte* slot);
/// Appends one client's grids (layout and metadata from `msg`, data in `slot`) to `into`
/// (halo as shipped: 0 for interiors; GridRecord::fields indexed by the step's slots, as
/// the client had them).
void unpack_grids(Unpacker& msg, const std::byte* slot, LocalGrids& into);

}  // namespace rwd::kernel::detail
