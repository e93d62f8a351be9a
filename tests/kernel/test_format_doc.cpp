// docs/file-format.md matches what the kernel writes: every row of the machine-readable
// table (between the format-table markers) must exist in a written file with the
// documented type and shape.
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::ToyModel;

namespace {
struct Row {
  std::string path, kind, type, shape, where;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.front() == ' ')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<Row> parse_table(const std::string& file) {
  std::ifstream in(file);
  REQUIRE(in);
  std::vector<Row> rows;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("format-table:begin") != std::string::npos) inside = true;
    else if (line.find("format-table:end") != std::string::npos) inside = false;
    else if (inside && line.rfind("| /", 0) == 0) {
      // split on '|' but not on '\|'
      std::vector<std::string> cells;
      std::string cur;
      for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') { cur += '|'; ++i; }
        else if (line[i] == '|') { cells.push_back(trim(cur)); cur.clear(); }
        else cur += line[i];
      }
      REQUIRE(cells.size() >= 5);
      rows.push_back({cells[0], cells[1], cells[2], cells[3], cells[4]});
    }
  }
  return rows;
}

std::string type_name(hid_t t) {
  auto cls = H5Tget_class(t);
  auto size = H5Tget_size(t);
  if (cls == H5T_STRING) return "string";
  if (cls == H5T_COMPOUND) return "compound";
  if (cls == H5T_FLOAT) return size == 8 ? "f64" : "f32";
  if (cls == H5T_INTEGER) {
    bool sign = H5Tget_sign(t) == H5T_SGN_2;
    return (sign ? "i" : "u") + std::to_string(size * 8);
  }
  return "?";
}

std::string shape_of(hid_t space) {
  if (H5Sget_simple_extent_type(space) == H5S_SCALAR) return "scalar";
  int n = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> d(static_cast<std::size_t>(n));
  H5Sget_simple_extent_dims(space, d.data(), nullptr);
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[static_cast<std::size_t>(i)]);
  return s + ")";
}

std::string resolve_shape(std::string s, const std::map<std::string, long long>& sym) {
  if (s == "scalar" || s == "-") return s;
  // replace symbols longest first
  std::vector<std::pair<std::string, long long>> v(sym.begin(), sym.end());
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [k, val] : v) {
    std::size_t p;
    while ((p = s.find(k)) != std::string::npos) s.replace(p, k.size(), std::to_string(val));
  }
  // evaluate "N+1"
  std::size_t p;
  while ((p = s.find('+')) != std::string::npos) {
    std::size_t a = p, b = p + 1;
    while (a > 0 && std::isdigit(static_cast<unsigned char>(s[a - 1]))) --a;
    while (b < s.size() && std::isdigit(static_cast<unsigned char>(s[b]))) ++b;
    long long x = std::stoll(s.substr(a, p - a)), y = std::stoll(s.substr(p + 1, b - p - 1));
    s.replace(a, b - a, std::to_string(x + y));
  }
  return s;
}
}  // namespace

TEST_CASE("docs/file-format.md describes exactly what the kernel writes", "[kernel]") {
  const auto rows = parse_table(std::string(REWIND_SOURCE_DIR) + "/docs/file-format.md");
  REQUIRE(rows.size() > 40);
  const std::string path = "kernel_test_format_doc.h5";
  {
    IoOptions opt;
    opt.write_views = false;
    ToyModel m = ToyModel::build(MPI_COMM_SELF);
    Writer w = Writer::create(MPI_COMM_SELF, path, ToyModel::common(), opt);
    // Steered steps (case_overrides): written here so that the row is checked too.
    const std::vector<std::string> steered = {"physics.nu=0.002", "boundary.xmin.velocity=[1.2, 0, 0]"};
    // ... and a checkpoint's monitor state (format 1.4).
    const std::vector<double> monitor_state = {1, 1, -0.25, 0.1, 0.05, std::nan("")};
    w.write_step({1, 0.1, 0.1, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, steered, monitor_state},
                 m.describe());
    w.write_step({2, 0.2, 0.1, StepKind::visualisation, ToyModel::visual_fields(true), true, steered, {}}, m.describe());
  }
  // ... and read back as written (RestartPoint::steered comes from here).
  CHECK(Reader::open(path).find_step("1").case_overrides ==
        std::vector<std::string>{"physics.nu=0.002", "boundary.xmin.velocity=[1.2, 0, 0]"});
  const auto ms = Reader::open(path).find_step("1").monitor_state;
  REQUIRE(ms.size() == 6);
  CHECK(ms[2] == -0.25);
  CHECK(std::isnan(ms[5]));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const std::map<std::string, long long> sym = {{"ng", 33}, {"nc", 8},     {"sx", 4},       {"sy", 4},
                                                {"sz", 4},  {"nlev", 4},   {"nvar", 2},     {"nsteps", 2},
                                                {"nchanges", 0},  {"nm", 6}};
  const std::vector<std::pair<std::string, bool>> steps = {{"step_00000001", true}, {"step_00000002", false}};
  // nd: the datasets with a checksum column, per step: the 9 topology datasets,
  // cell_type and the step's fields (format 1.4).
  const std::map<std::string, long long> nd = {
      {"step_00000001", 10 + static_cast<long long>(ToyModel::checkpoint_fields().size())},
      {"step_00000002", 10 + static_cast<long long>(ToyModel::visual_fields(true).size())}};
  int checked = 0;
  for (const auto& r : rows) {
    for (const auto& [sname, is_ckpt] : steps) {
      if (r.path.find("step_*") == std::string::npos && sname != steps[0].first) continue;  // non-step rows once
      if (r.where == "checkpoint" && !is_ckpt) continue;
      std::string p = r.path;
      if (auto s = p.find("step_*"); s != std::string::npos) p.replace(s, 6, sname);
      if (auto s = p.find("<var>"); s != std::string::npos) p.replace(s, 5, "u");
      INFO("row: " << r.path << " " << r.kind << " in " << sname);
      REQUIRE(H5Oexists_by_name(f, p.c_str(), H5P_DEFAULT) > 0);
      if (r.kind == "group") {
        hid_t g = H5Gopen2(f, p.c_str(), H5P_DEFAULT);
        CHECK(g >= 0);
        H5Gclose(g);
      } else if (r.kind == "dataset") {
        hid_t d = H5Dopen2(f, p.c_str(), H5P_DEFAULT);
        REQUIRE(d >= 0);
        hid_t t = H5Dget_type(d), s = H5Dget_space(d);
        const std::string tn = type_name(t);
        CHECK(("|" + r.type + "|").find("|" + tn + "|") != std::string::npos);
        auto step_sym = sym;
        step_sym["nd"] = nd.at(sname);
        CHECK(shape_of(s) == resolve_shape(r.shape, step_sym));
        H5Tclose(t);
        H5Sclose(s);
        H5Dclose(d);
      } else {
        REQUIRE(r.kind.rfind("attr:", 0) == 0);
        const std::string an = r.kind.substr(5);
        REQUIRE(H5Aexists_by_name(f, p.c_str(), an.c_str(), H5P_DEFAULT) > 0);
        hid_t a = H5Aopen_by_name(f, p.c_str(), an.c_str(), H5P_DEFAULT, H5P_DEFAULT);
        hid_t t = H5Aget_type(a), s = H5Aget_space(a);
        CHECK(type_name(t) == r.type);
        CHECK(shape_of(s) == resolve_shape(r.shape, sym));
        H5Tclose(t);
        H5Sclose(s);
        H5Aclose(a);
      }
      ++checked;
    }
  }
  CHECK(checked > 60);
  H5Fclose(f);
}

TEST_CASE("docs/file-format.md lists every IoOptions entry with its default", "[kernel]") {
  std::ifstream in(std::string(REWIND_SOURCE_DIR) + "/docs/file-format.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  for (char& ch : doc)
    if (ch == '\n') ch = ' ';
  std::string squeezed;  // line breaks inside a bracket become single spaces
  for (char ch : doc)
    if (!(ch == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += ch;
  const auto table = squeezed.find("Options (`IoOptions`, `options_table()`)");
  REQUIRE(table != std::string::npos);
  for (const auto& o : options_table()) {
    INFO("option " << o.name << " (default " << o.default_value << ")");
    const auto at = squeezed.find("`" + o.name + "`", table);
    REQUIRE(at != std::string::npos);
    // the first bracket after the name (possibly shared with the next names) holds the default
    const auto open = squeezed.find('[', at);
    REQUIRE(open != std::string::npos);
    const std::string bracket = squeezed.substr(open + 1, squeezed.find(']', open) - open - 1);
    std::string want = o.default_value;
    if (want == "1048576") want = "1 MiB";
    if (want == "16777216") want = "16 MiB";
    CHECK(bracket.find(want) != std::string::npos);
  }
}

TEST_CASE("set_option sets every table entry by name and refuses bad values", "[kernel]") {
  for (const auto& o : options_table()) {
    INFO("option " << o.name);
    IoOptions opt;
    OptionValue good, wrong;
    if (o.type == "bool") good = o.default_value != "true", wrong = std::int64_t{1};
    else if (o.type == "int") good = std::int64_t{4096}, wrong = std::string("4096");
    else good = std::string(o.name == "strategy" ? "dedicated" : "disable"), wrong = true;
    REQUIRE_NOTHROW(set_option(opt, o.name, good));
    // the value landed in the field the table documents
    std::string want;
    if (o.type == "bool") want = std::get<bool>(good) ? "true" : "false";
    else if (o.type == "int") want = "4096";
    else want = std::get<std::string>(good);
    CHECK(option_string(opt, o.name) == want);
    CHECK_THROWS_AS(set_option(opt, o.name, wrong), std::invalid_argument);
  }
  IoOptions opt;
  set_option(opt, "cb_nodes", std::int64_t{3});
  CHECK(opt.cb_nodes == 3);
  set_option(opt, "pipeline", false);
  CHECK_FALSE(opt.pipeline);
  set_option(opt, "romio_cb_write", std::string("enable"));
  CHECK(opt.romio_cb_write == "enable");
  CHECK_THROWS_WITH(set_option(opt, "stripe", std::int64_t{1}), Catch::Contains("unknown I/O option 'stripe'"));
  CHECK_THROWS_WITH(set_option(opt, "alignment", std::int64_t{-1}), Catch::Contains("must not be negative"));
  CHECK_THROWS_WITH(set_option(opt, "romio_ds_read", std::string("on")), Catch::Contains("\"enable\""));
}
