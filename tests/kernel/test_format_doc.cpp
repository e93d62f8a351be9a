// docs/file-format.md matches what the kernel writes: every row of the machine-readable
// table (between the format-table markers) must exist in a written file with the
// documented type and shape.
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>
#include <xxhash.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>

#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::ToyModel;

namespace {
struct Row {
  std::string path, kind, type, shape, where, meaning;
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
      rows.push_back({cells[0], cells[1], cells[2], cells[3], cells[4], cells.size() > 5 ? cells[5] : ""});
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
  if (cls == H5T_ENUM) {
    hid_t base = H5Tget_super(t);
    const std::string b = type_name(base);
    H5Tclose(base);
    return "enum(" + b + ")";
  }
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
/// The attribute of row `r` (kind "attr:NAME") exists at `path` with the row's type and shape.
void check_attribute(hid_t file, const std::string& path, const Row& r, const std::map<std::string, long long>& sym) {
  REQUIRE(r.kind.rfind("attr:", 0) == 0);
  const std::string an = r.kind.substr(5);
  REQUIRE(H5Aexists_by_name(file, path.c_str(), an.c_str(), H5P_DEFAULT) > 0);
  hid_t a = H5Aopen_by_name(file, path.c_str(), an.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  hid_t t = H5Aget_type(a), s = H5Aget_space(a);
  CHECK(type_name(t) == r.type);
  CHECK(shape_of(s) == resolve_shape(r.shape, sym));
  H5Tclose(t);
  H5Sclose(s);
  H5Aclose(a);
}
/// The compound member of row `r` (kind "member:NAME") of the dataset at `path` has the
/// row's type; an enum's members are exactly the `name = value` pairs in the row's meaning.
void check_member(hid_t file, const std::string& path, const Row& r, const std::string& meaning) {
  const std::string mn = r.kind.substr(7);
  hid_t d = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  hid_t t = H5Dget_type(d);
  REQUIRE(H5Tget_class(t) == H5T_COMPOUND);
  const int i = H5Tget_member_index(t, mn.c_str());
  REQUIRE(i >= 0);
  hid_t m = H5Tget_member_type(t, static_cast<unsigned>(i));
  CHECK(type_name(m) == r.type);
  if (H5Tget_class(m) == H5T_ENUM) {
    std::map<std::string, long long> stored, documented;
    for (int k = 0; k < H5Tget_nmembers(m); ++k) {
      char* name = H5Tget_member_name(m, static_cast<unsigned>(k));
      unsigned char v = 0;
      REQUIRE(H5Tget_member_value(m, static_cast<unsigned>(k), &v) >= 0);
      stored[name] = v;
      H5free_memory(name);
    }
    std::istringstream in(meaning);
    for (std::string tok; std::getline(in, tok, '`');)
      if (const auto eq = tok.find(" = "); eq != std::string::npos && tok.find(' ') == eq)
        documented[tok.substr(0, eq)] = std::stoll(tok.substr(eq + 3));
    CHECK(stored == documented);
  }
  H5Tclose(m);
  H5Tclose(t);
  H5Dclose(d);
}
}  // namespace

TEST_CASE("docs/file-format.md describes exactly what the kernel writes", "[kernel]") {
  const auto rows = parse_table(std::string(REWIND_SOURCE_DIR) + "/docs/file-format.md");
  REQUIRE(rows.size() > 40);
  const std::string path = "kernel_test_format_doc.h5";
  {
    IoOptions opt;
    opt.write_views = false;
    opt.statistics = true;  // the default, said here: the documented statistics/<var> and shares/<var> rows are
                            // checked too (the toy's 4^3 blocks give shares)
    ToyModel m = ToyModel::build(MPI_COMM_SELF);
    Writer w = Writer::create(MPI_COMM_SELF, path, ToyModel::common(), opt);
    // Steered steps (case_overrides): written here so that the row is checked too.
    const std::vector<std::string> steered = {"physics.nu=0.002", "boundary.xmin.velocity=[1.2, 0, 0]"};
    // ... and a checkpoint's monitor state (format 1.4).
    const std::vector<double> monitor_state = {1, 1, -0.25, 0.1, 0.05, std::nan("")};
    // ... and the code's named scalars (format 1.8).
    const std::vector<Scalar> scalars = {{"drag", 1.25}, {"energy", 0.1 + 0.2}};
    w.write_step({1, 0.1, 0.1, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, steered, monitor_state,
                  scalars},
                 m.describe());
    w.write_step({2, 0.2, 0.1, StepKind::visualisation, ToyModel::visual_fields(true), true, steered, {}, scalars},
                 m.describe());
  }
  // ... and read back as written (RestartPoint::steered comes from here).
  CHECK(Reader::open(path).find_step("1").case_overrides ==
        std::vector<std::string>{"physics.nu=0.002", "boundary.xmin.velocity=[1.2, 0, 0]"});
  const auto ms = Reader::open(path).find_step("1").monitor_state;
  REQUIRE(ms.size() == 6);
  CHECK(ms[2] == -0.25);
  CHECK(std::isnan(ms[5]));
  CHECK(Reader::open(path).find_step("2").scalars == std::vector<Scalar>{{"drag", 1.25}, {"energy", 0.1 + 0.2}});
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const std::map<std::string, long long> sym = {{"ng", 33}, {"nc", 8},     {"sx", 4},       {"sy", 4},
                                                {"sz", 4},  {"nlev", 4},   {"nvar", 2},     {"nsteps", 2},
                                                {"nchanges", 0},  {"nm", 6}, {"ns", 2}};
  const std::vector<std::pair<std::string, bool>> steps = {{"step_00000001", true}, {"step_00000002", false}};
  // nd: the datasets with a checksum column, per step: the 9 topology datasets,
  // cell_type, the step's fields (format 1.4), the statistics (1.9) and the shares (1.10) of
  // its 2 cell_data fields.
  const std::map<std::string, long long> nd = {
      {"step_00000001", 10 + static_cast<long long>(ToyModel::checkpoint_fields().size()) + 4},
      {"step_00000002", 10 + static_cast<long long>(ToyModel::visual_fields(true).size()) + 4}};
  int checked = 0;
  for (const auto& r : rows) {
    for (const auto& [sname, is_ckpt] : steps) {
      if (r.path.find("step_*") == std::string::npos && sname != steps[0].first) continue;  // non-step rows once
      if (r.where == "checkpoint" && !is_ckpt) continue;
      if (r.where == "zfp") continue;  // zfp-compressed datasets only: the next test
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
      } else if (r.kind.rfind("member:", 0) == 0) {
        check_member(f, p, r, r.meaning);
      } else {
        check_attribute(f, p, r, sym);
      }
      ++checked;
    }
  }
  CHECK(checked > 60);
  H5Fclose(f);
}

// §5's promise to other tools: every stored checksum is the XXH3-64 (seed 0) of the row's
// bytes as stored, so any xxHash can verify a file. Hashed here with the system's
// libxxhash, not the kernel's own builds of it (baseline, AVX2 and AVX-512, chosen at run time).
TEST_CASE("docs/file-format.md: each row's checksum is XXH3-64 of its stored bytes", "[kernel]") {
  const std::string path = "kernel_test_format_doc_sums.h5";
  {
    IoOptions opt;
    opt.write_views = false;
    ToyModel m = ToyModel::build(MPI_COMM_SELF);
    Writer w = Writer::create(MPI_COMM_SELF, path, ToyModel::common(), opt);
    w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe());
  }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  hid_t sums = H5Dopen2(f, "/simulation/step_00000001/checksums", H5P_DEFAULT);
  REQUIRE(sums >= 0);
  hid_t a = H5Aopen(sums, "datasets", H5P_DEFAULT);
  hid_t at = H5Aget_type(a);
  std::string names_text;
  if (H5Tis_variable_str(at) > 0) {
    char* c = nullptr;
    REQUIRE(H5Aread(a, at, &c) >= 0);
    names_text = c;
    H5free_memory(c);
  } else {
    std::vector<char> c(H5Tget_size(at) + 1, '\0');
    REQUIRE(H5Aread(a, at, c.data()) >= 0);
    names_text = c.data();
  }
  std::vector<std::string> names;
  for (std::istringstream in(names_text); !in.eof();) {
    std::string n;
    std::getline(in, n);
    if (!n.empty()) names.push_back(n);
  }
  H5Tclose(at);
  H5Aclose(a);
  hsize_t dims[2] = {0, 0};
  hid_t ss = H5Dget_space(sums);
  REQUIRE(H5Sget_simple_extent_dims(ss, dims, nullptr) == 2);
  H5Sclose(ss);
  REQUIRE(dims[1] == names.size());
  std::vector<std::uint64_t> table(dims[0] * dims[1]);
  REQUIRE(H5Dread(sums, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()) >= 0);
  H5Dclose(sums);
  REQUIRE(names.size() > 10);  // topology, cell types and the checkpoint's fields
  for (std::size_t col = 0; col < names.size(); ++col) {
    INFO("dataset " << names[col]);
    hid_t d = H5Dopen2(f, ("/simulation/step_00000001/" + names[col]).c_str(), H5P_DEFAULT);
    REQUIRE(d >= 0);
    hid_t ft = H5Dget_type(d), mt = H5Tget_native_type(ft, H5T_DIR_ASCEND), sp = H5Dget_space(d);
    const hsize_t n = static_cast<hsize_t>(H5Sget_simple_extent_npoints(sp));
    std::vector<unsigned char> bytes(n * H5Tget_size(mt));
    REQUIRE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);
    const std::size_t row = bytes.size() / dims[0];
    REQUIRE(row * dims[0] == bytes.size());
    for (hsize_t r = 0; r < dims[0]; ++r)
      CHECK(XXH3_64bits(bytes.data() + r * row, row) == table[r * dims[1] + col]);
    H5Sclose(sp);
    H5Tclose(mt);
    H5Tclose(ft);
    H5Dclose(d);
  }
  // Format 1.6: the datasets without rows carry XXH3-64 of all their bytes as stored.
  for (const char* p : {"/simulation/step_00000001/level_offsets", "/common/case_file", "/common/variable_names",
                        "/common/variable_units", "/common/lineage/changes"}) {
    INFO("dataset " << p);
    hid_t d = H5Dopen2(f, p, H5P_DEFAULT);
    REQUIRE(d >= 0);
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(H5Sget_simple_extent_npoints(sp)) * H5Tget_size(ft));
    if (!bytes.empty()) REQUIRE(H5Dread(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);  // LE as stored
    std::uint64_t stored = 0;
    hid_t xa = H5Aopen(d, "xxh3", H5P_DEFAULT);
    REQUIRE(xa >= 0);
    REQUIRE(H5Aread(xa, H5T_NATIVE_UINT64, &stored) >= 0);
    CHECK(XXH3_64bits(bytes.data(), bytes.size()) == stored);
    H5Aclose(xa);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Dclose(d);
  }
  H5Fclose(f);
}

TEST_CASE("docs/file-format.md's filter table and chunked layout are what the kernel writes", "[kernel]") {
  // | compression = deflate | ... | 2, 1 | ...: option, value, filter ids in pipeline order
  std::ifstream in(std::string(REWIND_SOURCE_DIR) + "/docs/file-format.md");
  REQUIRE(in);
  struct FilterRow {
    std::string option, value;
    std::vector<int> ids;
  };
  std::vector<FilterRow> table;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("filter-table:begin") != std::string::npos) inside = true;
    else if (line.find("filter-table:end") != std::string::npos) inside = false;
    else if (inside && line.find(" = ") != std::string::npos) {
      std::vector<std::string> cells;
      std::stringstream ss(line.substr(1));
      for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(trim(cell));
      REQUIRE(cells.size() >= 4);
      FilterRow row;
      row.option = cells[0].substr(0, cells[0].find(" = "));
      row.value = cells[0].substr(cells[0].find(" = ") + 3);
      std::stringstream ids(cells[2]);
      for (std::string id; std::getline(ids, id, ',');) row.ids.push_back(std::stoi(trim(id)));
      table.push_back(row);
    }
  }
  REQUIRE(table.size() == 4);
  const std::map<std::string, long long> sym = {{"ng", 33}, {"sx", 4}, {"sy", 4}, {"sz", 4}};
  const auto rows = parse_table(std::string(REWIND_SOURCE_DIR) + "/docs/file-format.md");
  for (const auto& f : table) {
    INFO(f.option << " = " << f.value);
    const std::string path = "kernel_test_format_doc_" + f.value + ".h5";
    IoOptions opt;
    opt.write_views = false;
    opt.chunk_grids = 5;
    set_option(opt, f.option, f.value);
    if (f.value == "zfp") opt.zfp_accuracy = 1e-3;
    {
      ToyModel m = ToyModel::build(MPI_COMM_SELF);
      Writer w = Writer::create(MPI_COMM_SELF, path, ToyModel::common(), opt);
      w.write_step(ToyModel::visual_step(1, 0.1, 0.1, false, true), m.describe());
    }
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(file >= 0);
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    hid_t ver = H5Aopen(root, "format_version", H5P_DEFAULT);
    long long v[2] = {};
    H5Aread(ver, H5T_NATIVE_LLONG, v);
    CHECK(v[1] == kFormatMinor);  // compressed files are written at the current minor (1.5 introduced them)
    H5Aclose(ver);
    H5Gclose(root);
    // The chunked layout of §3: chunks of (min(chunk_grids, ng), sz, sy, sx), the filters
    // in the table's order; topology contiguous.
    hid_t d = H5Dopen2(file, "/simulation/step_00000001/cell_data/u", H5P_DEFAULT);
    REQUIRE(d >= 0);
    hid_t dcpl = H5Dget_create_plist(d);
    REQUIRE(H5Pget_layout(dcpl) == H5D_CHUNKED);
    hsize_t chunk[4] = {};
    REQUIRE(H5Pget_chunk(dcpl, 4, chunk) == 4);
    CHECK(chunk[0] == 5);
    CHECK(chunk[1] == 4);
    CHECK(chunk[3] == 4);
    std::vector<int> ids;
    for (int i = 0; i < H5Pget_nfilters(dcpl); ++i) {
      unsigned flags = 0, cd[8];
      std::size_t n = 8;
      ids.push_back(static_cast<int>(H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &n, cd, 0, nullptr, nullptr)));
    }
    CHECK(ids == f.ids);
    H5Pclose(dcpl);
    H5Dclose(d);
    hid_t uid = H5Dopen2(file, "/simulation/step_00000001/uid", H5P_DEFAULT);
    hid_t ucpl = H5Dget_create_plist(uid);
    CHECK(H5Pget_layout(ucpl) == H5D_CONTIGUOUS);
    H5Pclose(ucpl);
    H5Dclose(uid);
    // The rows that exist only in zfp steps.
    if (f.value == "zfp")
      for (const auto& r : rows) {
        if (r.where != "zfp") continue;
        INFO("row: " << r.path << " " << r.kind);
        std::string p = r.path;
        p.replace(p.find("step_*"), 6, "step_00000001");
        if (auto s = p.find("<var>"); s != std::string::npos) p.replace(s, 5, "u");
        check_attribute(file, p, r, sym);
      }
    H5Fclose(file);
    // ... and the kernel reads it back (within the bound for zfp).
    Reader r = Reader::open(path);
    std::vector<double> got(33 * 64);
    std::vector<std::int64_t> all(33);
    for (std::int64_t i = 0; i < 33; ++i) all[static_cast<std::size_t>(i)] = i;
    REQUIRE_NOTHROW(r.read_rows(1, "cell_data", "u", all, got.data()));
  }
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
    const std::int64_t size = std::min<std::int64_t>(4096, o.max);
    const std::string word = o.choices.empty() ? "" : o.choices.back();
    if (o.type == "bool") good = o.default_value != "true", wrong = std::int64_t{1};
    else if (o.type == "int") good = size, wrong = std::string("4096");
    else if (o.type == "number") good = 0.25, wrong = std::string("0.25");
    else good = word, wrong = true;
    REQUIRE_NOTHROW(set_option(opt, o.name, good));
    // the value landed in the field the table documents
    std::string want;
    if (o.type == "bool") want = std::get<bool>(good) ? "true" : "false";
    else if (o.type == "int") want = std::to_string(size);
    else if (o.type == "number") want = "0.25";
    else want = word;
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
  // compression (format 1.5): the names, ranges and combinations that are refused
  CHECK_THROWS_WITH(set_option(opt, "compression", std::string("zstd")),
                    Catch::Contains("'compression' must be \"none\", \"deflate\", \"lz4\", \"bitshuffle\""));
  CHECK_THROWS_WITH(set_option(opt, "compression", std::string("zfp")), Catch::Contains("zfp is lossy"));
  CHECK_THROWS_WITH(set_option(opt, "compression_level", std::int64_t{10}), Catch::Contains("1 ... 9"));
  CHECK_THROWS_WITH(set_option(opt, "chunk_grids", std::int64_t{0}), Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(set_option(opt, "zfp_accuracy", -1.0), Catch::Contains("must be a number >= 0"));
  IoOptions c;
  CHECK(options_problem(c).empty());
  c.visualisation_compression = Codec::zfp;
  CHECK_THAT(options_problem(c), Catch::Contains("needs zfp_accuracy > 0"));
  c.zfp_accuracy = 1e-3;
  CHECK(options_problem(c).empty());
  c.compression = Codec::deflate;
  c.collective_transfer = false;
  CHECK_THAT(options_problem(c), Catch::Contains("'compression' needs collective_transfer = true"));
}

TEST_CASE("strategy and codecs: parsed once, spelt as the table and the docs spell them", "[kernel]") {
  // The spellings are the contract (case files, the C API, the hand-off wire, logs).
  const std::pair<Strategy, const char*> strategies[] = {{Strategy::automatic, "auto"},
                                                         {Strategy::collective, "collective"},
                                                         {Strategy::independent, "independent"},
                                                         {Strategy::aggregated, "aggregated"},
                                                         {Strategy::dedicated, "dedicated"}};
  for (const auto& [value, text] : strategies) {
    INFO(text);
    CHECK(std::string(to_string(value)) == text);
    Strategy back = Strategy::automatic;
    CHECK(parse(text, back));
    CHECK(back == value);
    IoOptions o;
    set_option_text(o, "strategy", text);
    CHECK(o.strategy == value);
    CHECK(option_string(o, "strategy") == text);
  }
  const std::pair<Codec, const char*> codecs[] = {
      {Codec::none, "none"}, {Codec::deflate, "deflate"}, {Codec::lz4, "lz4"}, {Codec::bitshuffle, "bitshuffle"}, {Codec::zfp, "zfp"}};
  for (const auto& [value, text] : codecs) {
    INFO(text);
    CHECK(std::string(to_string(value)) == text);
    Codec back = Codec::none;
    CHECK(parse(text, back));
    CHECK(back == value);
  }
  Strategy s = Strategy::collective;
  CHECK_FALSE(parse("async", s));
  CHECK_FALSE(parse("Auto", s));
  CHECK(s == Strategy::collective);  // untouched
  Codec c = Codec::lz4;
  CHECK_FALSE(parse("zstd", c));
  CHECK(c == Codec::lz4);
  IoOptions o;
  set_option_text(o, "visualisation_compression", "zfp");
  CHECK(o.visualisation_compression == Codec::zfp);
  CHECK(option_string(o, "visualisation_compression") == "zfp");
  CHECK_THROWS_WITH(set_option_text(o, "visualisation_compression", "deflate"),
                    "I/O option 'visualisation_compression' must be \"none\", \"zfp\", not \"deflate\"");
  CHECK(o.visualisation_compression == Codec::zfp);  // a refused value changes nothing
}
