#include "rewind/kernel/views.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
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

/// A level's Spacing and AMRBox: each block's integer cell box at its level, from its box
/// and the domain origin (rows [r0, r0 + nl) of the step).
void write_amr_boxes(const Ctx& c, const h5::Group& lg, const CommonInfo& cm, const StepTopology& topo, std::int64_t r0,
                     std::int64_t nl) {
  const BlockShape b = cm.block;
  const BoxRow& first = topo.bbox[static_cast<std::size_t>(r0)];
  const double w[3] = {first[1] - first[0], first[3] - first[2], first[5] - first[4]};
  h5::write_attr_f64(c, lg, "Spacing", {w[0] / b.sx, w[1] / b.sy, w[2] / b.sz});
  std::vector<std::int32_t> boxes(static_cast<std::size_t>(nl) * 6);
  const int s[3] = {b.sx, b.sy, b.sz};
  for (std::int64_t i = 0; i < nl; ++i) {
    const BoxRow& bb = topo.bbox[static_cast<std::size_t>(r0 + i)];
    for (int a = 0; a < 3; ++a) {
      const double ix = w[a] > 0 ? std::round((bb[2 * a] - cm.domain[2 * a]) / w[a]) : 0.0;
      boxes[static_cast<std::size_t>(6 * i + 2 * a)] = static_cast<std::int32_t>(ix) * s[a];
      boxes[static_cast<std::size_t>(6 * i + 2 * a + 1)] = static_cast<std::int32_t>(ix) * s[a] + s[a] - 1;
    }
  }
  hsize_t bd[2] = {static_cast<hsize_t>(nl), 6};
  h5::Dataspace bsp(H5Screate_simple(2, bd, nullptr));
  h5::Dataset bds(
      c.check(H5Dcreate2(lg, "AMRBox", H5T_STD_I32LE, bsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create AMRBox"));
  c.check_status(H5Dwrite(bds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, boxes.data()), "write AMRBox");
}

/// A level's CellData: one virtual dataset per field, mapping rows [r0, r0 + nl) of the
/// step's 4-D dataset in `src_file` to a 1-D array.
void write_level_fields(const Ctx& c, const h5::Group& cd, const std::string& src_file, const StepEntry& step,
                        const StepTopology& topo, const BlockShape& b, std::int64_t r0, std::int64_t nl,
                        const std::vector<FieldInfo>& fields) {
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
    h5::Dataset vd(c.check(H5Dcreate2(cd, fld.name.c_str(), type, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                           "create virtual dataset " + fld.name));
  }
}

/// The view file at `tmp_path`: /VTKHDF and a group per level.
void write_view_file(const Ctx& c, const std::string& tmp_path, const std::string& h5_path, const CommonInfo& cm,
                     const StepEntry& step, const StepTopology& topo, const std::vector<FieldInfo>& fields) {
  // Default libver: virtual datasets need the 1.10 format (ParaView's HDF5 reads it).
  h5::File f(c.check(H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create view file"));
  h5::Group v(c.check(H5Gcreate2(f, "VTKHDF", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create /VTKHDF"));
  write_vtkhdf_header(c, v, cm);
  const std::string src_file = "../" + base_of(h5_path);  // resolved relative to the view file
  for (int l = 0; l + 1 < static_cast<int>(topo.level_offsets.size()); ++l) {
    const std::int64_t r0 = topo.level_offsets[l], nl = topo.level_offsets[l + 1] - r0;
    h5::Group lg(c.check(H5Gcreate2(v, fmt::format("Level{}", l).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         "create level group"));
    write_amr_boxes(c, lg, cm, topo, r0, nl);
    h5::Group cd(c.check(H5Gcreate2(lg, "CellData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create CellData"));
    h5::Group(H5Gcreate2(lg, "PointData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    h5::Group(H5Gcreate2(lg, "FieldData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    write_level_fields(c, cd, src_file, step, topo, cm.block, r0, nl, fields);
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

void write_step_view(const std::string& h5_path, const CommonInfo& cm, const StepEntry& step, const StepTopology& topo,
                     const std::vector<FieldInfo>& fields) {
  h5::silence_errors();
  const std::string dir = views_directory(h5_path);
  ::mkdir(dir.c_str(), 0777);
  const std::string name = detail::step_group_name(step.step) + ".hdf";
  const std::string final_path = dir + "/" + name;
  const std::string tmp_path = final_path + ".tmp";
  Ctx c{final_path};
  try {  // a view cut short (a full disk) goes: its space with it
    write_view_file(c, tmp_path, h5_path, cm, step, topo, fields);
  } catch (...) {
    std::remove(tmp_path.c_str());
    throw;
  }
  if (std::rename(tmp_path.c_str(), final_path.c_str()) != 0) c.fail(ErrorKind::io, "cannot rename view file");
  update_series(h5_path, name, step.time);
}

void regenerate_views(const std::string& h5_path) {
  Reader r = Reader::open(h5_path);
  for (const auto& e : r.steps(true)) {
    if (e.n_grids == 0) continue;
    StepTopology t = r.read_topology(e.step);
    std::vector<FieldInfo> f;
    for (const auto& fi : r.fields(e.step))
      if (fi.group == "cell_data") f.push_back(fi);
    write_step_view(h5_path, r.common(), e, t, f);
  }
}

}  // namespace rwd::kernel
