#include "rewind/kernel/views.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "format/format.hpp"
#include "io/h5util.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::kernel {

using h5::Ctx;

namespace {
std::string dir_of(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}
std::string base_of(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}
std::string stem_of(const std::string& p) {
  std::string b = base_of(p);
  auto d = b.find_last_of('.');
  return d == std::string::npos ? b : b.substr(0, d);
}
}  // namespace

std::string views_directory(const std::string& h5_path) { return dir_of(h5_path) + "/" + stem_of(h5_path) + ".views"; }
std::string series_path(const std::string& h5_path) {
  return views_directory(h5_path) + "/" + stem_of(h5_path) + ".hdf.series";
}

namespace {

/// /VTKHDF's attributes: version, type (an ASCII fixed-length string, as VTK expects), origin.
void write_vtkhdf_header(const Ctx& c, const h5::Group& v, const CommonInfo& cm) {
  h5::write_attr_i64(c, v, "Version", {1, 0});
  {
    h5::Datatype t(H5Tcopy(H5T_C_S1));
    const char type[] = "OverlappingAMR";
    H5Tset_size(t, sizeof(type) - 1);
    h5::Dataspace sp(H5Screate(H5S_SCALAR));
    h5::Attribute a(c.check(H5Acreate2(v, "Type", t, sp, H5P_DEFAULT, H5P_DEFAULT), "create Type"));
    c.check_status(H5Awrite(a, t, type), "write Type");
  }
  h5::write_attr_f64(c, v, "Origin", {cm.domain[0], cm.domain[2], cm.domain[4]});
}

/// A level's Spacing and AMRBox: each block's integer cell box [i0,i1,j0,j1,k0,k1] at its level.
struct LevelBoxes {
  std::array<double, 3> spacing{};
  std::vector<std::int32_t> boxes;  ///< 6 per block
};

/// The boxes of rows [r0, r0 + nl) of the step, from their bounding boxes and the domain origin.
LevelBoxes level_boxes(const CommonInfo& cm, const StepTopology& topo, std::int64_t r0, std::int64_t nl) {
  const BlockShape b = cm.block;
  const BoxRow& first = topo.bbox[static_cast<std::size_t>(r0)];
  const double w[3] = {first[1] - first[0], first[3] - first[2], first[5] - first[4]};
  LevelBoxes lv;
  lv.spacing = {w[0] / b.sx, w[1] / b.sy, w[2] / b.sz};
  lv.boxes.resize(static_cast<std::size_t>(nl) * 6);
  const int s[3] = {b.sx, b.sy, b.sz};
  for (std::int64_t i = 0; i < nl; ++i) {
    const BoxRow& bb = topo.bbox[static_cast<std::size_t>(r0 + i)];
    for (int a = 0; a < 3; ++a) {
      const double ix = w[a] > 0 ? std::round((bb[2 * a] - cm.domain[2 * a]) / w[a]) : 0.0;
      lv.boxes[static_cast<std::size_t>(6 * i + 2 * a)] = static_cast<std::int32_t>(ix) * s[a];
      lv.boxes[static_cast<std::size_t>(6 * i + 2 * a + 1)] = static_cast<std::int32_t>(ix) * s[a] + s[a] - 1;
    }
  }
  return lv;
}

void write_amr_boxes(const Ctx& c, const h5::Group& lg, const LevelBoxes& lv) {
  h5::write_attr_f64(c, lg, "Spacing", {lv.spacing[0], lv.spacing[1], lv.spacing[2]});
  hsize_t bd[2] = {static_cast<hsize_t>(lv.boxes.size() / 6), 6};
  h5::Dataspace bsp(H5Screate_simple(2, bd, nullptr));
  h5::Dataset bds(
      c.check(H5Dcreate2(lg, "AMRBox", H5T_STD_I32LE, bsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create AMRBox"));
  c.check_status(H5Dwrite(bds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, lv.boxes.data()), "write AMRBox");
}

constexpr std::uint8_t kHiddenCell = 32;  // vtkDataSetAttributes::HIDDENCELL

/// Hides the cells of `lv`'s blocks that `finer`'s blocks cover (`ghost`: lv's cells, block
/// after block). Each finer block lies in one block of `lv` (a child in its parent grid).
void hide_covered(std::vector<std::uint8_t>& ghost, const LevelBoxes& lv, const LevelBoxes& finer,
                  const BlockShape& b) {
  const int s[3] = {b.sx, b.sy, b.sz};
  int ratio[3];
  for (int a = 0; a < 3; ++a)
    ratio[a] = std::max(1, static_cast<int>(std::lround(lv.spacing[static_cast<std::size_t>(a)] /
                                                        finer.spacing[static_cast<std::size_t>(a)])));
  std::map<std::array<int, 3>, std::size_t> block_at;  // a block's position in block units -> its index
  for (std::size_t i = 0; i < lv.boxes.size() / 6; ++i)
    block_at[{lv.boxes[6 * i] / s[0], lv.boxes[6 * i + 2] / s[1], lv.boxes[6 * i + 4] / s[2]}] = i;
  const std::size_t cells = static_cast<std::size_t>(b.cells());
  for (std::size_t j = 0; j < finer.boxes.size() / 6; ++j) {
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = finer.boxes[6 * j + 2 * static_cast<std::size_t>(a)] / ratio[a];
      hi[a] = (finer.boxes[6 * j + 2 * static_cast<std::size_t>(a) + 1] + 1) / ratio[a] - 1;
    }
    const auto it = block_at.find({lo[0] / s[0], lo[1] / s[1], lo[2] / s[2]});
    if (it == block_at.end()) continue;
    const std::int32_t* p = &lv.boxes[6 * it->second];
    for (int a = 0; a < 3; ++a) hi[a] = std::min(hi[a], p[2 * a + 1]);  // within its parent, always
    for (int z = lo[2]; z <= hi[2]; ++z)
      for (int y = lo[1]; y <= hi[1]; ++y)
        for (int x = lo[0]; x <= hi[0]; ++x)
          ghost[it->second * cells + static_cast<std::size_t>(((z - p[4]) * s[1] + (y - p[2])) * s[0] + (x - p[0]))] |=
              kHiddenCell;
  }
}

/// The unit of variable `name` in /common ("" when it lists none).
std::string unit_of(const CommonInfo& cm, const std::string& name) {
  const auto it =
      std::find_if(cm.variables.begin(), cm.variables.end(), [&](const Variable& v) { return v.name == name; });
  return it == cm.variables.end() ? std::string() : it->unit;
}

/// A level's CellData: one virtual dataset per field, mapping rows [r0, r0 + nl) of the
/// step's 4-D dataset in `src_file` to a 1-D array named with the field's unit.
void write_level_fields(const Ctx& c, const h5::Group& cd, const std::string& src_file, const StepEntry& step,
                        const StepTopology& topo, const CommonInfo& cm, std::int64_t r0, std::int64_t nl,
                        const std::vector<FieldInfo>& fields) {
  const BlockShape& b = cm.block;
  const hsize_t src_dims[4] = {static_cast<hsize_t>(topo.n_grids), static_cast<hsize_t>(b.sz),
                               static_cast<hsize_t>(b.sy), static_cast<hsize_t>(b.sx)};
  for (const auto& fld : fields) {
    hsize_t n = static_cast<hsize_t>(nl) * static_cast<hsize_t>(b.cells());
    h5::Dataspace vsp(H5Screate_simple(1, &n, nullptr));
    h5::Dataspace ssp(H5Screate_simple(4, src_dims, nullptr));
    hsize_t start[4] = {static_cast<hsize_t>(r0), 0, 0, 0}, count[4] = {1, 1, 1, 1};
    hsize_t block[4] = {static_cast<hsize_t>(nl), src_dims[1], src_dims[2], src_dims[3]};
    H5Sselect_hyperslab(ssp, H5S_SELECT_SET, start, nullptr, count, block);
    h5::Plist dcpl(H5Pcreate(H5P_DATASET_CREATE));
    const std::string src_dset = step.group + "/" + fld.group + "/" + fld.name;
    c.check_status(H5Pset_virtual(dcpl, vsp, src_file.c_str(), src_dset.c_str(), ssp), "set virtual mapping");
    hid_t type = fld.float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    const std::string name = view_array_name(fld.name, unit_of(cm, fld.name));
    h5::Plist lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_char_encoding(lcpl, H5T_CSET_UTF8);  // the name may hold '∕' (U+2215)
    h5::Dataset vd(
        c.check(H5Dcreate2(cd, name.c_str(), type, vsp, lcpl, dcpl, H5P_DEFAULT), "create virtual dataset " + name));
  }
}

/// A level's vtkGhostType: HIDDENCELL (32, VTK's bit) on the hidden cells of rows
/// [r0, r0 + nl), 0 elsewhere; a real array (a virtual one cannot turn cell_type's codes
/// into VTK's bits), deflated: it is mostly zeros. ParaView 5.11's reader ORs in the
/// blanking of the cells under finer grids that it computes itself
/// (vtkAMRUtilities::BlankCells) — but finds no parent among boxes one cell thick (a 2-D
/// run: vtkAMRBox::DoesBoxIntersectAlongDimension compares strictly), so for those
/// (`finer`, the next level's boxes) the view hides the covered cells itself.
void write_level_ghosts(const Ctx& c, const h5::Group& cd, const std::vector<CellRun>& hidden, const BlockShape& b,
                        std::int64_t r0, std::int64_t nl, const LevelBoxes& lv, const LevelBoxes* finer) {
  const std::int64_t cells = b.cells(), lo = r0 * cells, hi = (r0 + nl) * cells;
  std::vector<std::uint8_t> ghost(static_cast<std::size_t>(hi - lo), 0);
  auto it = std::lower_bound(hidden.begin(), hidden.end(), lo,
                             [](const CellRun& r, std::int64_t v) { return r.first + r.count <= v; });
  for (; it != hidden.end() && it->first < hi; ++it)
    for (std::int64_t i = std::max(lo, it->first); i < std::min(hi, it->first + it->count); ++i)
      ghost[static_cast<std::size_t>(i - lo)] = kHiddenCell;
  if (finer) hide_covered(ghost, lv, *finer, b);
  hsize_t n = ghost.size();
  hsize_t chunk = std::min<hsize_t>(n, hsize_t{1} << 16);
  h5::Dataspace sp(H5Screate_simple(1, &n, nullptr));
  h5::Plist dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (n > 0) {  // every level needs the array (the reader looks for level 0's in each)
    c.check_status(H5Pset_chunk(dcpl, 1, &chunk), "chunk vtkGhostType");
    c.check_status(H5Pset_deflate(dcpl, 6), "deflate vtkGhostType");
  }
  h5::Dataset d(
      c.check(H5Dcreate2(cd, "vtkGhostType", H5T_STD_U8LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), "create vtkGhostType"));
  c.check_status(H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, ghost.data()), "write vtkGhostType");
}

/// A level's FieldData: `time` and `step`, one value per block (ParaView 5.11's reader
/// gives each block its share of a level's field arrays and the dataset Level0's: the
/// Information tab lists them with their range).
void write_level_field_data(const Ctx& c, const h5::Group& fd, const StepEntry& step, std::int64_t nl) {
  hsize_t n = static_cast<hsize_t>(nl);
  h5::Dataspace sp(H5Screate_simple(1, &n, nullptr));
  const std::vector<double> time(static_cast<std::size_t>(nl), step.time);
  const std::vector<std::int64_t> number(static_cast<std::size_t>(nl), step.step);
  h5::Dataset t(
      c.check(H5Dcreate2(fd, "time", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create time"));
  c.check_status(H5Dwrite(t, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, time.data()), "write time");
  h5::Dataset s(
      c.check(H5Dcreate2(fd, "step", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create step"));
  c.check_status(H5Dwrite(s, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, number.data()), "write step");
}

/// The view file at `tmp_path`: /VTKHDF and a group per level.
void write_view_file(const Ctx& c, const std::string& tmp_path, const std::string& h5_path, const CommonInfo& cm,
                     const StepEntry& step, const StepTopology& topo, const std::vector<FieldInfo>& fields,
                     const std::vector<CellRun>* hidden) {
  // Default libver: virtual datasets need the 1.10 format (ParaView's HDF5 reads it).
  h5::File f(c.check(H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create view file"));
  h5::Group v(c.check(H5Gcreate2(f, "VTKHDF", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /VTKHDF"));
  write_vtkhdf_header(c, v, cm);
  const std::string src_file = "../" + base_of(h5_path);  // resolved relative to the view file
  const int n_levels = static_cast<int>(topo.level_offsets.size()) - 1;
  std::vector<LevelBoxes> boxes;
  boxes.reserve(static_cast<std::size_t>(std::max(0, n_levels)));
  for (int l = 0; l < n_levels; ++l)
    boxes.push_back(level_boxes(cm, topo, topo.level_offsets[l], topo.level_offsets[l + 1] - topo.level_offsets[l]));
  const bool thin = cm.block.sx == 1 || cm.block.sy == 1 || cm.block.sz == 1;  // see write_level_ghosts
  const bool ghosts = hidden != nullptr || (thin && n_levels > 1);
  const std::vector<CellRun> none;
  for (int l = 0; l < n_levels; ++l) {
    const std::int64_t r0 = topo.level_offsets[l], nl = topo.level_offsets[l + 1] - r0;
    h5::Group lg(c.check(H5Gcreate2(v, fmt::format("Level{}", l).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "create level group"));
    write_amr_boxes(c, lg, boxes[static_cast<std::size_t>(l)]);
    h5::Group cd(c.check(H5Gcreate2(lg, "CellData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create CellData"));
    h5::Group(H5Gcreate2(lg, "PointData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    h5::Group fd(c.check(H5Gcreate2(lg, "FieldData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create FieldData"));
    write_level_fields(c, cd, src_file, step, topo, cm, r0, nl, fields);
    const LevelBoxes* finer = thin && l + 1 < n_levels ? &boxes[static_cast<std::size_t>(l + 1)] : nullptr;
    if (ghosts)
      write_level_ghosts(c, cd, hidden ? *hidden : none, cm.block, r0, nl, boxes[static_cast<std::size_t>(l)], finer);
    write_level_field_data(c, fd, step, nl);
  }
  c.check_status(f.close(), "close view file");
}

/// The .hdf.series index (JSON) with `name` at `time`, replaced atomically.
void update_series(const std::string& h5_path, const std::string& name, double time) {
  const std::string sp = series_path(h5_path);
  nlohmann::json j;
  {
    std::ifstream in(sp);
    if (in) {
      try {
        in >> j;
      } catch (...) {
        j = nlohmann::json();
      }
    }
  }
  if (!j.is_object() || !j.contains("files") || !j["files"].is_array())
    j = {{"file-series-version", "1.0"}, {"files", nlohmann::json::array()}};
  auto& files = j["files"];
  nlohmann::json kept = nlohmann::json::array();
  for (auto& e : files)
    if (e.value("name", "") != name) kept.push_back(e);
  kept.push_back({{"name", name}, {"time", time}});
  std::sort(kept.begin(), kept.end(), [](const nlohmann::json& a, const nlohmann::json& b2) {
    return a.value("time", 0.0) < b2.value("time", 0.0);
  });
  j["files"] = kept;
  const std::string tmp = sp + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
    if (!out.flush()) {  // before the rename: a full disk must not replace the index by a cut one
      std::remove(tmp.c_str());
      Ctx{sp}.fail(ErrorKind::io, "cannot write series file");
    }
  }
  if (std::rename(tmp.c_str(), sp.c_str()) != 0) Ctx{sp}.fail(ErrorKind::io, "cannot rename series file");
}

}  // namespace

void append_hidden_runs(const std::uint8_t* types, std::int64_t row, std::int64_t cells, std::vector<CellRun>& out) {
  for (std::int64_t i = 0; i < cells; ++i) {
    if (types[i] != kHiddenCellType) continue;
    const std::int64_t at = row * cells + i;
    if (!out.empty() && out.back().first + out.back().count == at) ++out.back().count;
    else out.push_back({at, 1});
  }
}

std::string view_array_name(const std::string& name, const std::string& unit) {
  if (unit.empty()) return name;
  std::string u;
  for (char ch : unit) u += ch == '/' ? std::string("\xE2\x88\x95") : std::string(1, ch);
  return name + " [" + u + "]";
}

void write_step_view(const std::string& h5_path, const CommonInfo& cm, const StepEntry& step, const StepTopology& topo,
                     const std::vector<FieldInfo>& fields, const std::vector<CellRun>* hidden) {
  h5::silence_errors();
  const std::string dir = views_directory(h5_path);
  ::mkdir(dir.c_str(), 0777);
  const std::string name = detail::step_group_name(step.step) + ".hdf";
  const std::string final_path = dir + "/" + name;
  const std::string tmp_path = final_path + ".tmp";
  Ctx c{final_path};
  try {  // a view cut short (a full disk) goes: its space with it
    write_view_file(c, tmp_path, h5_path, cm, step, topo, fields, hidden);
  } catch (...) {
    std::remove(tmp_path.c_str());
    throw;
  }
  if (std::rename(tmp_path.c_str(), final_path.c_str()) != 0) c.fail(ErrorKind::io, "cannot rename view file");
  update_series(h5_path, name, step.time);
}

namespace {
/// The hidden cells of a step from its cell_type; null when the step has none.
std::unique_ptr<std::vector<CellRun>> read_hidden(const Reader& r, std::int64_t step, std::int64_t n_grids) {
  const std::int64_t cells = r.common().block.cells();
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n_grids));
  for (std::int64_t i = 0; i < n_grids; ++i) rows[static_cast<std::size_t>(i)] = i;
  std::vector<std::uint8_t> types(static_cast<std::size_t>(n_grids * cells));
  try {
    r.read_cell_types(step, rows, types.data());
  } catch (const FileError& e) {
    if (e.kind() == ErrorKind::missing_object) return nullptr;  // a step written without cell types
    throw;
  }
  auto hidden = std::make_unique<std::vector<CellRun>>();
  for (std::int64_t i = 0; i < n_grids; ++i) append_hidden_runs(types.data() + i * cells, i, cells, *hidden);
  return hidden;
}
}  // namespace

void regenerate_views(const std::string& h5_path) {
  Reader r = Reader::open(h5_path);
  for (const auto& e : r.steps(true)) {
    if (e.n_grids == 0) continue;
    StepTopology t = r.read_topology(e.step);
    std::vector<FieldInfo> f;
    for (const auto& fi : r.fields(e.step))
      if (fi.group == "cell_data") f.push_back(fi);
    write_step_view(h5_path, r.common(), e, t, f, read_hidden(r, e.step, t.n_grids).get());
  }
}

}  // namespace rwd::kernel
