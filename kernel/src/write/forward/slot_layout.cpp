// A step in a client's slot (slot_layout.hpp): pure.
#include "write/forward/slot_layout.hpp"

#include <algorithm>
#include <cstring>

namespace rwd::kernel::detail {

namespace {

/// Copies the interior of a padded array (x fastest) into `dst`.
template <typename T>
void copy_interior(const T* src, T* dst, BlockShape b, int h) {
  if (h == 0) {  // the interior is the whole array
    std::memcpy(dst, src, static_cast<std::size_t>(b.cells()) * sizeof(T));
    return;
  }
  const auto sx = static_cast<std::size_t>(b.sx), px = sx + 2 * static_cast<std::size_t>(h);
  const auto py = static_cast<std::size_t>(b.sy + 2 * h), hh = static_cast<std::size_t>(h);
  for (std::size_t z = 0; z < static_cast<std::size_t>(b.sz); ++z)
    for (std::size_t y = 0; y < static_cast<std::size_t>(b.sy); ++y, dst += sx)
      std::memcpy(dst, src + ((z + hh) * py + y + hh) * px + hh, sx * sizeof(T));
}

/// Cells of one array in a slot: the block, with `h` halo layers on every side.
std::int64_t shipped_cells(BlockShape b, int h) {
  return static_cast<std::int64_t>(b.sx + 2 * h) * (b.sy + 2 * h) * (b.sz + 2 * h);
}

std::int64_t type_offset(std::size_t slots, std::size_t grids, std::int64_t cells) {
  return static_cast<std::int64_t>(slots * grids) * cells * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace

SlotLayout slot_layout(const StepInfo& info, bool write, const std::vector<FieldSpec>* consume) {
  SlotLayout l;
  if (write)
    for (const auto& f : info.fields) l.slots.push_back(f.slot);
  if (consume)
    for (const auto& f : *consume) l.slots.push_back(f.slot);
  std::sort(l.slots.begin(), l.slots.end());
  l.slots.erase(std::unique(l.slots.begin(), l.slots.end()), l.slots.end());
  l.padded = consume != nullptr;
  l.types = (write && info.write_cell_type) || consume != nullptr;
  return l;
}

std::int64_t slot_bytes(const SlotLayout& layout, const LocalGrids& grids) {
  const std::int64_t cells = shipped_cells(grids.block, layout.padded ? grids.halo : 0);
  const std::size_t n = grids.grids.size();
  return type_offset(layout.slots.size(), n, cells) + (layout.types ? static_cast<std::int64_t>(n) * cells : 0);
}

void pack_step(const SlotLayout& layout, const LocalGrids& grids, int rank, std::byte* slot, Packer& msg, bool copy) {
  const auto& slots = layout.slots;
  const int halo = layout.padded ? grids.halo : 0;  // shipped
  const std::int64_t cells = shipped_cells(grids.block, halo);
  const std::size_t n = grids.grids.size();
  // A padded array is copied whole (one memcpy); an interior is cut out of it.
  const auto copy_array = [&](const auto* src, auto* dst) {
    if (layout.padded) std::memcpy(dst, src, static_cast<std::size_t>(cells) * sizeof(*src));
    else copy_interior(src, dst, grids.block, grids.halo);
  };
  msg.put(grids.block);
  msg.put(halo);
  msg.put(rank);
  msg.put(static_cast<std::uint64_t>(n));
  msg.put(static_cast<std::uint64_t>(slots.size()));
  for (int s : slots) msg.put(s);
  auto* values = reinterpret_cast<double*>(slot);
  auto* types = reinterpret_cast<std::uint8_t*>(slot + type_offset(slots.size(), n, cells));
  for (std::size_t g = 0; g < n; ++g) {
    const GridRecord& r = grids.grids[g];
    msg.put(r.uid);
    msg.put(r.level);
    msg.put(r.sort_key);
    msg.put(r.bbox);
    msg.put(r.parent_uid);
    msg.put(r.child_uids);
    const bool has_type = layout.types && r.cell_type != nullptr;
    msg.put(static_cast<std::uint8_t>(has_type));
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const auto sl = static_cast<std::size_t>(slots[k]);
      // A missing array is the writer's error to report: send zeros, mark it absent.
      const bool present = sl < r.fields.size() && r.fields[sl] != nullptr;
      msg.put(static_cast<std::uint8_t>(present));
      if (present && copy) copy_array(r.fields[sl], values + (k * n + g) * static_cast<std::size_t>(cells));
    }
    if (has_type && copy) copy_array(r.cell_type, types + g * static_cast<std::size_t>(cells));
  }
}

LocalGrids slot_grids(const SlotLayout& layout, const LocalGrids& like, std::byte* slot) {
  const auto& slots = layout.slots;
  const std::size_t n = like.grids.size();
  const std::int64_t cells = shipped_cells(like.block, 0);
  auto* values = reinterpret_cast<double*>(slot);
  auto* types = reinterpret_cast<std::uint8_t*>(slot + type_offset(slots.size(), n, cells));
  const std::size_t width = slots.empty() ? 0 : static_cast<std::size_t>(slots.back()) + 1;
  LocalGrids out;
  out.block = like.block;
  out.halo = 0;
  out.grids.reserve(n);
  for (std::size_t g = 0; g < n; ++g) {
    GridRecord r = like.grids[g];
    r.fields.assign(width, nullptr);
    for (std::size_t k = 0; k < slots.size(); ++k)
      r.fields[static_cast<std::size_t>(slots[k])] = values + (k * n + g) * static_cast<std::size_t>(cells);
    r.cell_type = layout.types ? types + g * static_cast<std::size_t>(cells) : nullptr;
    out.grids.push_back(std::move(r));
  }
  return out;
}

void unpack_grids(Unpacker& msg, const std::byte* slot, LocalGrids& into) {
  const auto block = msg.get<BlockShape>();
  const auto halo = msg.get<int>();
  const auto rank = msg.get<int>();
  const auto n = static_cast<std::size_t>(msg.get<std::uint64_t>());
  std::vector<int> slots(static_cast<std::size_t>(msg.get<std::uint64_t>()));
  for (int& s : slots) s = msg.get<int>();
  into.block = block;
  into.halo = halo;  // every client of a step ships the same way
  const std::int64_t cells = shipped_cells(block, halo);
  const auto* values = reinterpret_cast<const double*>(slot);
  const auto* types = reinterpret_cast<const std::uint8_t*>(slot + type_offset(slots.size(), n, cells));
  const std::size_t width = slots.empty() ? 0 : static_cast<std::size_t>(slots.back()) + 1;
  for (std::size_t g = 0; g < n; ++g) {
    GridRecord r;
    r.uid = msg.get<std::uint64_t>();
    r.level = msg.get<int>();
    r.sort_key = msg.get<std::uint64_t>();
    r.bbox = msg.get<BoxRow>();
    r.parent_uid = msg.get<std::uint64_t>();
    r.child_uids = msg.uids();
    const bool has_type = msg.get<std::uint8_t>() != 0;
    r.fields.assign(width, nullptr);
    for (std::size_t k = 0; k < slots.size(); ++k)
      if (msg.get<std::uint8_t>() != 0)
        r.fields[static_cast<std::size_t>(slots[k])] = values + (k * n + g) * static_cast<std::size_t>(cells);
    if (has_type) r.cell_type = types + g * static_cast<std::size_t>(cells);
    r.rank = rank;
    into.grids.push_back(std::move(r));
  }
}

}  // namespace rwd::kernel::detail
