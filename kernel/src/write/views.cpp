#include "rewind/kernel/views.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <xxhash.h>

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

/// /VTKHDF's attributes: version and type (an ASCII fixed-length string, as VTK expects).
void write_vtkhdf_header(const Ctx& c, const h5::Group& v) {
  h5::write_attr_i64(c, v, "Version", {1, 0});
  h5::Datatype t(H5Tcopy(H5T_C_S1));
  const char type[] = "UnstructuredGrid";
  H5Tset_size(t, sizeof(type) - 1);
  h5::Dataspace sp(H5Screate(H5S_SCALAR));
  h5::Attribute a(c.check(H5Acreate2(v, "Type", t, sp, H5P_DEFAULT, H5P_DEFAULT), "create Type"));
  c.check_status(H5Awrite(a, t, type), "write Type");
}

/// A level's spacing and its blocks' integer cell boxes [i0,i1,j0,j1,k0,k1] at that level.
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

constexpr std::uint8_t kHiddenCell = 32;  // vtkDataSetAttributes::HIDDENCELL

/// Hides the cells of `lv`'s blocks that `finer`'s blocks cover (`ghost`: lv's cells, block
/// after block). Each finer block lies in one block of `lv` (a child in its parent grid).
void hide_covered(std::uint8_t* ghost, const LevelBoxes& lv, const LevelBoxes& finer, const BlockShape& b) {
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

/// CellData: one virtual dataset per field, the step's whole 4-D dataset in `src_file` as a
/// 1-D array (cell row * cells + (z, y, x)) named with the field's unit.
void write_fields(const Ctx& c, const h5::Group& cd, const std::string& src_file, const StepEntry& step,
                  const StepTopology& topo, const CommonInfo& cm, const std::vector<FieldInfo>& fields) {
  const BlockShape& b = cm.block;
  const hsize_t src_dims[4] = {static_cast<hsize_t>(topo.n_grids), static_cast<hsize_t>(b.sz),
                               static_cast<hsize_t>(b.sy), static_cast<hsize_t>(b.sx)};
  for (const auto& fld : fields) {
    hsize_t n = static_cast<hsize_t>(topo.n_grids) * static_cast<hsize_t>(b.cells());
    h5::Dataspace vsp(H5Screate_simple(1, &n, nullptr));
    h5::Dataspace ssp(H5Screate_simple(4, src_dims, nullptr));
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

/// A real 1-D or (n, 3) dataset, deflated in chunks when it is not tiny (geometry repeats).
void write_array(const Ctx& c, const h5::Group& g, const char* name, hid_t file_type, hid_t mem_type, const void* data,
                 hsize_t n, hsize_t width = 1) {
  const hsize_t dims[2] = {n, width};
  const int rank = width > 1 ? 2 : 1;
  h5::Dataspace sp(H5Screate_simple(rank, dims, nullptr));
  h5::Plist dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (n >= 1024) {
    const hsize_t chunk[2] = {std::min<hsize_t>(n, hsize_t{1} << 15), width};
    c.check_status(H5Pset_chunk(dcpl, rank, chunk), std::string("chunk ") + name);
    c.check_status(H5Pset_shuffle(dcpl), std::string("shuffle ") + name);
    c.check_status(H5Pset_deflate(dcpl, 1), std::string("deflate ") + name);
  }
  h5::Dataset d(
      c.check(H5Dcreate2(g, name, file_type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), std::string("create ") + name));
  c.check_status(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), std::string("write ") + name);
}

/// Every cell of every grid, row after row and within a row in (z, y, x) order — the order
/// of the flattened cell_data, so the fields map without a copy. A 2-D run's cells are quads
/// in the plane z = the domain's minimum (drawn flat, looked at from +z); else hexahedra.
/// Each grid has its own corner points.
struct Geometry {
  std::vector<double> points;      ///< 3 per point
  std::vector<std::int64_t> conn;  ///< corners per cell
  int corners = 8;
  std::uint8_t vtk_type = 12;  ///< VTK_HEXAHEDRON, or VTK_QUAD (9)
};

Geometry build_geometry(const CommonInfo& cm, const StepTopology& topo) {
  const BlockShape& b = cm.block;
  Geometry g;
  const bool flat = cm.dim == 2 && b.sz == 1;
  const int pz = flat ? 1 : b.sz + 1, px = b.sx + 1, py = b.sy + 1;
  if (flat) g.corners = 4, g.vtk_type = 9;
  const std::size_t rows = static_cast<std::size_t>(topo.n_grids);
  g.points.reserve(rows * static_cast<std::size_t>(px * py * pz) * 3);
  g.conn.reserve(rows * static_cast<std::size_t>(b.cells() * g.corners));
  for (std::size_t r = 0; r < rows; ++r) {
    const BoxRow& bb = topo.bbox[r];
    const std::int64_t p0 = static_cast<std::int64_t>(g.points.size() / 3);
    for (int k = 0; k < pz; ++k)
      for (int j = 0; j < py; ++j)
        for (int i = 0; i < px; ++i) {
          g.points.push_back(bb[0] + (bb[1] - bb[0]) * i / b.sx);
          g.points.push_back(bb[2] + (bb[3] - bb[2]) * j / b.sy);
          g.points.push_back(flat ? cm.domain[4] : bb[4] + (bb[5] - bb[4]) * k / b.sz);
        }
    const auto at = [&](int i, int j, int k) { return p0 + (static_cast<std::int64_t>(k) * py + j) * px + i; };
    for (int k = 0; k < b.sz; ++k)
      for (int j = 0; j < b.sy; ++j)
        for (int i = 0; i < b.sx; ++i) {
          const int layers = flat ? 1 : 2;
          for (int dk = 0; dk < layers; ++dk)
            for (const auto& [di, dj] : {std::pair{0, 0}, {1, 0}, {1, 1}, {0, 1}})
              g.conn.push_back(at(i + di, j + dj, flat ? 0 : k + dk));
        }
  }
  return g;
}

/// vtkGhostType: HIDDENCELL (32, VTK's bit) on the hidden (solid) cells and on every cell
/// under a finer grid, so *Surface* draws exactly the fluid leaf cells (ParaView's surface
/// filter drops hidden cells). A real array (a virtual one cannot turn cell_type's codes
/// into VTK's bits), deflated: it is mostly zeros.
std::vector<std::uint8_t> ghost_types(const CommonInfo& cm, const StepTopology& topo,
                                      const std::vector<CellRun>& hidden) {
  const std::int64_t cells = cm.block.cells();
  std::vector<std::uint8_t> ghost(static_cast<std::size_t>(topo.n_grids * cells), 0);
  for (const CellRun& run : hidden)
    for (std::int64_t i = run.first; i < std::min<std::int64_t>(run.first + run.count, topo.n_grids * cells); ++i)
      ghost[static_cast<std::size_t>(i)] = kHiddenCell;
  const int n_levels = topo.n_levels();
  std::vector<LevelBoxes> boxes;
  boxes.reserve(static_cast<std::size_t>(std::max(0, n_levels)));
  for (int l = 0; l < n_levels; ++l)
    boxes.push_back(level_boxes(cm, topo, topo.level_offsets[l], topo.level_offsets[l + 1] - topo.level_offsets[l]));
  for (int l = 0; l + 1 < n_levels; ++l)
    hide_covered(ghost.data() + topo.level_offsets[l] * cells, boxes[static_cast<std::size_t>(l)],
                 boxes[static_cast<std::size_t>(l + 1)], cm.block);
  return ghost;
}

/// FieldData: the step's `time` and `step` (the Information tab's data arrays).
void write_field_data(const Ctx& c, const h5::Group& fd, const StepEntry& step) {
  write_array(c, fd, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &step.time, 1);
  const std::int64_t number = step.step;
  write_array(c, fd, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, &number, 1);
}

/// The file a view's geometry maps into, shared by every step with the same grids:
/// "mesh_<XXH3-64 of the boxes, seeded with the block shape>.h5" beside the views.
std::string mesh_name(const CommonInfo& cm, const StepTopology& topo) {
  const BlockShape& b = cm.block;
  const auto seed = (static_cast<std::uint64_t>(cm.dim) << 48) | (static_cast<std::uint64_t>(b.sx) << 32) |
                    (static_cast<std::uint64_t>(b.sy) << 16) | static_cast<std::uint64_t>(b.sz);
  return fmt::format("mesh_{:016x}.h5",
                     XXH3_64bits_withSeed(topo.bbox.data(), topo.bbox.size() * sizeof(BoxRow), seed));
}

/// The mesh file: Points, Connectivity, Offsets, Types (VTKHDF's names and types), written
/// to a temporary name and renamed, so a mesh file that exists is whole.
void write_mesh_file(const Ctx& c, const std::string& path, const CommonInfo& cm, const StepTopology& topo) {
  const std::string tmp = path + ".tmp";
  try {
    h5::File f(c.check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create mesh file"));
    h5::Group root(c.check(H5Gopen2(f, "/", H5P_DEFAULT), "open /"));
    const Geometry g = build_geometry(cm, topo);
    const auto n_cells = static_cast<std::size_t>(topo.n_grids * cm.block.cells());
    write_array(c, root, "Points", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, g.points.data(), g.points.size() / 3, 3);
    write_array(c, root, "Connectivity", H5T_STD_I64LE, H5T_NATIVE_INT64, g.conn.data(), g.conn.size());
    std::vector<std::int64_t> offsets(n_cells + 1);
    for (std::size_t i = 0; i < offsets.size(); ++i) offsets[i] = static_cast<std::int64_t>(i) * g.corners;
    write_array(c, root, "Offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, offsets.data(), offsets.size());
    const std::vector<std::uint8_t> types(n_cells, g.vtk_type);
    write_array(c, root, "Types", H5T_STD_U8LE, H5T_NATIVE_UINT8, types.data(), types.size());
    c.check_status(f.close(), "close mesh file");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) c.fail(ErrorKind::io, "cannot rename mesh file");
}

/// A virtual dataset `name` of `v` mapping the whole dataset of the same name in `src_file`.
void map_whole(const Ctx& c, const h5::Group& v, const char* name, hid_t type, const std::string& src_file, hsize_t n,
               hsize_t width = 1) {
  const hsize_t dims[2] = {n, width};
  h5::Dataspace sp(H5Screate_simple(width > 1 ? 2 : 1, dims, nullptr));
  h5::Plist dcpl(H5Pcreate(H5P_DATASET_CREATE));
  c.check_status(H5Pset_virtual(dcpl, sp, src_file.c_str(), (std::string("/") + name).c_str(), sp),
                 std::string("map ") + name);
  h5::Dataset d(c.check(H5Dcreate2(v, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), std::string("create ") + name));
}

/// The view file at `tmp_path`: one piece, /VTKHDF's unstructured grid; its geometry maps
/// into the mesh file of its grids (written first when no earlier step wrote it).
void write_view_file(const Ctx& c, const std::string& tmp_path, const std::string& h5_path, const CommonInfo& cm,
                     const StepEntry& step, const StepTopology& topo, const std::vector<FieldInfo>& fields,
                     const std::vector<CellRun>* hidden) {
  const std::string mesh = mesh_name(cm, topo), mesh_path = views_directory(h5_path) + "/" + mesh;
  struct stat st {};
  if (::stat(mesh_path.c_str(), &st) != 0) write_mesh_file(c, mesh_path, cm, topo);
  // Default libver: virtual datasets need the 1.10 format (ParaView's HDF5 reads it).
  h5::File f(c.check(H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create view file"));
  h5::Group v(c.check(H5Gcreate2(f, "VTKHDF", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /VTKHDF"));
  write_vtkhdf_header(c, v);
  const bool flat = cm.dim == 2 && cm.block.sz == 1;  // as build_geometry
  const std::int64_t corners = flat ? 4 : 8;
  const std::int64_t n_points = topo.n_grids * (cm.block.sx + 1) * (cm.block.sy + 1) * (flat ? 1 : cm.block.sz + 1);
  const std::int64_t n_cells = topo.n_grids * cm.block.cells(), n_conn = n_cells * corners;
  write_array(c, v, "NumberOfPoints", H5T_STD_I64LE, H5T_NATIVE_INT64, &n_points, 1);
  write_array(c, v, "NumberOfCells", H5T_STD_I64LE, H5T_NATIVE_INT64, &n_cells, 1);
  write_array(c, v, "NumberOfConnectivityIds", H5T_STD_I64LE, H5T_NATIVE_INT64, &n_conn, 1);
  map_whole(c, v, "Points", H5T_IEEE_F64LE, mesh, static_cast<hsize_t>(n_points), 3);  // relative to the view
  map_whole(c, v, "Connectivity", H5T_STD_I64LE, mesh, static_cast<hsize_t>(n_conn));
  map_whole(c, v, "Offsets", H5T_STD_I64LE, mesh, static_cast<hsize_t>(n_cells) + 1);
  map_whole(c, v, "Types", H5T_STD_U8LE, mesh, static_cast<hsize_t>(n_cells));
  h5::Group cd(c.check(H5Gcreate2(v, "CellData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create CellData"));
  const h5::Group pd(H5Gcreate2(v, "PointData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));  // empty, as VTK expects
  h5::Group fd(c.check(H5Gcreate2(v, "FieldData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create FieldData"));
  write_fields(c, cd, "../" + base_of(h5_path), step, topo, cm, fields);  // resolved relative to the view file
  const std::vector<CellRun> none;
  const std::vector<std::uint8_t> ghost = ghost_types(cm, topo, hidden ? *hidden : none);
  write_array(c, cd, "vtkGhostType", H5T_STD_U8LE, H5T_NATIVE_UINT8, ghost.data(), ghost.size());
  write_field_data(c, fd, step);
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
  if (topo.n_grids * cm.block.cells() > kMaxViewCells)
    throw FileError(ErrorKind::invalid_argument, views_directory(h5_path),
                    fmt::format("a step of {} cells, more than the {} a stock-ParaView view is written for: "
                                "open the run file with the Rewind plugin (docs/paraview.md)",
                                topo.n_grids * cm.block.cells(), kMaxViewCells));
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
    if (e.n_grids == 0 || e.n_grids * r.common().block.cells() > kMaxViewCells) continue;
    StepTopology t = r.read_topology(e.step);
    std::vector<FieldInfo> f;
    for (const auto& fi : r.fields(e.step))
      if (fi.group == "cell_data") f.push_back(fi);
    write_step_view(h5_path, r.common(), e, t, f, read_hidden(r, e.step, t.n_grids).get());
  }
}

}  // namespace rwd::kernel
