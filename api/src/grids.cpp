// A rank's grids (rewind_grids_*): what a code describes, and the records a write or a
// live boundary hands to the kernel, float arrays converted (records_of).
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "handles.hpp"

using namespace rwd::api;

namespace {

std::size_t grid_index(const rewind_grids& g, std::int64_t index) {
  if (index < 0 || static_cast<std::size_t>(index) >= g.records.size())
    throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid index {} outside 0..{}", index,
                                                  static_cast<std::int64_t>(g.records.size()) - 1));
  return static_cast<std::size_t>(index);
}

// The entry of `slot`, the list grown to hold it.
template <class T>
const T*& at_slot(std::vector<const T*>& list, int slot) {
  if (slot < 0 || slot > 4096) throw Status(REWIND_ERR_ARGUMENT, fmt::format("variable slot {} outside 0..4096", slot));
  if (list.size() <= static_cast<std::size_t>(slot)) list.resize(static_cast<std::size_t>(slot) + 1, nullptr);
  return list[static_cast<std::size_t>(slot)];
}

}  // namespace

namespace rwd::api {

std::vector<k::GridRecord> records_of(const rewind_grids& g, const k::BlockShape& block) {
  std::vector<k::GridRecord> out = g.records;
  const auto padded = static_cast<std::size_t>(block.sx + 2 * g.halo) * static_cast<std::size_t>(block.sy + 2 * g.halo) *
                      static_cast<std::size_t>(block.sz + 2 * g.halo);
  std::size_t used = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t s = 0; s < g.floats[i].size(); ++s) {
      const float* in = g.floats[i][s];
      if (in == nullptr) continue;
      if (g.converted.size() <= used) g.converted.emplace_back();
      auto& buf = g.converted[used++];
      buf.assign(in, in + padded);
      if (out[i].fields.size() <= s) out[i].fields.resize(s + 1, nullptr);
      out[i].fields[s] = buf.data();
    }
  return out;
}

}  // namespace rwd::api

extern "C" {

rewind_status rewind_grids_create_v(rewind_grids** grids, int halo, int api_version) {
  return guarded([&] {
    check_version(api_version);
    need(grids, "grids");
    if (halo < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("halo = {}: at least 0", halo));
    *grids = new rewind_grids{halo, {}, next_generation(), {}, {}};
  });
}

rewind_status rewind_grids_free(rewind_grids* grids) {
  delete grids;
  return REWIND_OK;
}

rewind_status rewind_grids_clear(rewind_grids* grids) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    g.records.clear();
    g.floats.clear();
    g.generation = next_generation();
  });
}

rewind_status rewind_grids_add(rewind_grids* grids, uint64_t uid, int level, uint64_t sort_key, const double bbox[6],
                     uint64_t parent_uid, int n_children, const uint64_t* child_uids, int64_t* index) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    need(bbox, "bbox");
    if (uid == k::kNoUid) throw Status(REWIND_ERR_ARGUMENT, "uid UINT64_MAX is reserved for \"no grid\"");
    if (level < 0) throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid {}: level {} < 0", uid, level));
    if ((level == 0) != (parent_uid == k::kNoUid))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid {}: the root (level 0) and only it has no parent (UINT64_MAX)", uid));
    if (n_children < 0 || (n_children > 0 && child_uids == nullptr))
      throw Status(REWIND_ERR_ARGUMENT, fmt::format("grid {}: {} children but no child_uids", uid, n_children));
    k::GridRecord r;
    r.uid = uid;
    r.level = level;
    r.sort_key = sort_key;
    std::copy(bbox, bbox + 6, r.bbox.begin());
    r.parent_uid = parent_uid;
    r.child_uids.assign(child_uids, child_uids + n_children);
    g.records.push_back(std::move(r));
    g.floats.emplace_back();
    g.generation = next_generation();
    if (index != nullptr) *index = static_cast<int64_t>(g.records.size()) - 1;
  });
}

rewind_status rewind_grids_set_field(rewind_grids* grids, int64_t index, int slot, const double* data) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    at_slot(g.records[grid_index(g, index)].fields, slot) = data;
    auto& fl = g.floats[grid_index(g, index)];
    if (static_cast<std::size_t>(slot) < fl.size()) fl[static_cast<std::size_t>(slot)] = nullptr;
  });
}

rewind_status rewind_grids_set_field_float(rewind_grids* grids, int64_t index, int slot, const float* data) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    at_slot(g.floats[grid_index(g, index)], slot) = data;
    auto& f = g.records[grid_index(g, index)].fields;
    if (static_cast<std::size_t>(slot) < f.size()) f[static_cast<std::size_t>(slot)] = nullptr;
  });
}

rewind_status rewind_grids_set_cell_type(rewind_grids* grids, int64_t index, const uint8_t* types) {
  return guarded([&] {
    auto& g = need(grids, "grids");
    g.records[grid_index(g, index)].cell_type = types;
  });
}

rewind_status rewind_grids_count(const rewind_grids* grids, int64_t* n) {
  return guarded([&] { need(n, "n") = static_cast<int64_t>(need(grids, "grids").records.size()); });
}

}  // extern "C"
