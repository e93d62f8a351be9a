// Every bad-file case gives a typed FileError whose what() is one line naming the file and
// the problem; the reader never modifies the file.
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::slurp;
using rwd::kernel::test::ToyModel;

namespace {
void spit(const std::string& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }

const std::string kGood = "kernel_test_bad_good.h5";

void make_good() {
  IoOptions opt;
  opt.write_views = false;
  ToyModel m = ToyModel::build(MPI_COMM_SELF);
  Writer w = Writer::create(MPI_COMM_SELF, kGood, ToyModel::common(), opt);
  w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe());
  w.write_step(ToyModel::checkpoint_step(2, 0.2, 0.1), m.describe());
}

/// Edits a copy of the good file with plain HDF5 (as a damaged or foreign file would be).
std::string edited(const std::string& name, void (*edit)(hid_t)) {
  spit(name, slurp(kGood));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fopen(name.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  edit(f);
  H5Fclose(f);
  return name;
}

/// Sets shares/u row 3, octant 5 of step group `step` to `to` (0: one ulp above it).
void change_share(hid_t f, const char* step, double to) {
  hid_t d = H5Dopen2(f, (std::string("/simulation/") + step + "/shares/u").c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  std::vector<double> v(33 * 8);
  REQUIRE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  REQUIRE(v[3 * 8 + 5] > 0);
  v[3 * 8 + 5] = to == 0 ? std::nextafter(v[3 * 8 + 5], 1e300) : to;
  REQUIRE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Dclose(d);
}

/// Runs `f`, expects FileError of `kind`, checks the message rules and that the file is untouched.
template <typename F>
void expect_error(const std::string& path, ErrorKind kind, F&& f) {
  const std::string before = slurp(path);
  bool threw = false;
  try {
    f();
  } catch (const FileError& e) {
    threw = true;
    INFO(e.what());
    CHECK(e.kind() == kind);
    const std::string w = e.what();
    CHECK(w.rfind(path + ": ", 0) == 0);          // names the file first
    CHECK(w.find('\n') == std::string::npos);      // one line
    CHECK(w.size() < 420);
  }
  CHECK(threw);
  CHECK(slurp(path) == before);  // never written by a reader
}
}  // namespace

TEST_CASE("bad files give one clear typed error and are never written", "[kernel]") {
  make_good();

  SECTION("missing file") {
    bool threw = false;
    try {
      (void)Reader::open("kernel_test_does_not_exist.h5");
    } catch (const FileError& e) {
      threw = true;
      CHECK(e.kind() == ErrorKind::not_found);
      CHECK(std::string(e.what()) == "kernel_test_does_not_exist.h5: no such file");
    }
    CHECK(threw);
  }
  SECTION("not HDF5 at all") {
    spit("kernel_test_bad_text.h5", "[case]\nthis is a TOML file, not HDF5\n");
    expect_error("kernel_test_bad_text.h5", ErrorKind::not_hdf5, [] { (void)Reader::open("kernel_test_bad_text.h5"); });
  }
  SECTION("an HDF5 file that is not a Rewind file") {
    hid_t f = H5Fcreate("kernel_test_bad_foreign.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(f, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Fclose(f);
    expect_error("kernel_test_bad_foreign.h5", ErrorKind::not_rewind, [] { (void)Reader::open("kernel_test_bad_foreign.h5"); });
  }
  SECTION("a newer major format version") {
    auto p = edited("kernel_test_bad_newer.h5", [](hid_t f) {
      hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
      long long v[2] = {kFormatMajor + 1, 0};
      H5Awrite(a, H5T_NATIVE_LLONG, v);
      H5Aclose(a);
    });
    expect_error(p, ErrorKind::newer_version, [&] { (void)Reader::open(p); });
    // and the collective open agrees on it
    expect_error(p, ErrorKind::newer_version, [&] { (void)Reader::open(p, MPI_COMM_SELF); });
  }
  SECTION("a truncated file opens: its intact steps read, verify and restart; the damaged one is named") {
    // Cut inside the last step's cell_data/v (the offsets from plain HDF5: an independent
    // look at where the bytes are).
    hid_t f = H5Fopen(kGood.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    hid_t d = H5Dopen2(f, "/simulation/step_00000002/cell_data/v", H5P_DEFAULT);
    const auto at = static_cast<std::size_t>(H5Dget_offset(d)), n = static_cast<std::size_t>(H5Dget_storage_size(d));
    H5Dclose(d);
    H5Fclose(f);
    const std::string data = slurp(kGood);
    REQUIRE(at + n <= data.size());
    const std::string p = "kernel_test_bad_truncated.h5";
    spit(p, data.substr(0, at + n / 2));
    const Reader r = Reader::open(p);
    CHECK(r.bytes_missing() == static_cast<std::int64_t>(data.size() - (at + n / 2)));
    CHECK(r.steps(true).size() == 2);
    CHECK(r.verify_step(1).problems.empty());
    const auto bad = r.verify_step(2).problems;
    REQUIRE_FALSE(bad.empty());
    for (const auto& line : bad) CHECK(line.find("/simulation/step_00000002/") == 0);  // datasets past the cut
    CHECK(std::count_if(bad.begin(), bad.end(), [](const std::string& line) {
            return line.find("/simulation/step_00000002/cell_data/v: grid row 32 ") == 0;
          }) == 1);
    std::vector<double> buf(64);
    expect_error(p, ErrorKind::corrupt, [&] { r.read_rows(2, "cell_data", "v", {32}, buf.data()); });
    r.read_rows(1, "cell_data", "v", {32}, buf.data());  // the step before reads
    ToyModel back = ToyModel::restart(r, 1, MPI_COMM_SELF);  // the intact step restarts
    CHECK(back.grids.size() == 33);
    const Reader whole = Reader::open(kGood);
    CHECK(whole.bytes_missing() == 0);
    // Cut in half, the run's constants in /common are gone too (format 1.6 checksums them):
    // refused as damaged, naming what is, never read as if whole.
    spit("kernel_test_bad_half.h5", data.substr(0, data.size() / 2));
    expect_error("kernel_test_bad_half.h5", ErrorKind::corrupt, [] { (void)Reader::open("kernel_test_bad_half.h5"); });
    try {
      (void)Reader::open("kernel_test_bad_half.h5");
    } catch (const FileError& e) {
      CHECK(std::string(e.what()).find("/common/") != std::string::npos);
    }
  }
  SECTION("damaged metadata") {
    std::string data = slurp(kGood);
    for (std::size_t i = 48; i < 2048 && i < data.size(); ++i) data[i] = static_cast<char>(0xA5);
    spit("kernel_test_bad_corrupt.h5", data);
    expect_error("kernel_test_bad_corrupt.h5", ErrorKind::corrupt, [] { (void)Reader::open("kernel_test_bad_corrupt.h5"); });
  }
  SECTION("a missing dataset") {
    auto p = edited("kernel_test_bad_missing.h5", [](hid_t f) {
      H5Ldelete(f, "/simulation/step_00000002/cell_data/u", H5P_DEFAULT);
      H5Ldelete(f, "/simulation/step_00000001/level", H5P_DEFAULT);
    });
    Reader r = Reader::open(p);
    std::vector<double> buf(64);
    expect_error(p, ErrorKind::missing_object, [&] { r.read_rows(2, "cell_data", "u", {0}, buf.data()); });
    expect_error(p, ErrorKind::missing_object, [&] { (void)r.read_topology(1); });
    // other data in the same file still reads
    r.read_rows(2, "cell_data", "v", {0}, buf.data());
  }
  SECTION("a mis-shaped dataset") {
    auto p = edited("kernel_test_bad_shape.h5", [](hid_t f) {
      H5Ldelete(f, "/simulation/step_00000002/cell_data/u", H5P_DEFAULT);
      hsize_t d[4] = {33, 2, 2, 2};
      hid_t sp = H5Screate_simple(4, d, nullptr);
      H5Dclose(H5Dcreate2(f, "/simulation/step_00000002/cell_data/u", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      H5Ldelete(f, "/simulation/step_00000001/child_rows", H5P_DEFAULT);
      hsize_t d2[2] = {33, 3};
      hid_t sp2 = H5Screate_simple(2, d2, nullptr);
      H5Dclose(H5Dcreate2(f, "/simulation/step_00000001/child_rows", H5T_STD_I64LE, sp2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      H5Sclose(sp);
      H5Sclose(sp2);
    });
    Reader r = Reader::open(p);
    std::vector<double> buf(64);
    expect_error(p, ErrorKind::bad_shape, [&] { r.read_rows(2, "cell_data", "u", {0}, buf.data()); });
    expect_error(p, ErrorKind::bad_shape, [&] { (void)r.read_topology(1); });
  }
  SECTION("a changed share (format 1.10) is refused: by its row checksum, or as negative where none") {
    // Step 1's shares/u row 3, octant 5 one ulp up (checksummed); step 2's -1, its
    // checksum table removed (as in a file written without checksums).
    auto p = edited("kernel_test_bad_shares.h5", [](hid_t f) {
      change_share(f, "step_00000001", 0);
      change_share(f, "step_00000002", -1);
      H5Ldelete(f, "/simulation/step_00000002/checksums", H5P_DEFAULT);
    });
    const Reader r = Reader::open(p);
    REQUIRE(r.has_shares(1, "u"));
    const auto message = [&](std::int64_t step) {
      std::string what;
      expect_error(p, ErrorKind::corrupt, [&] { (void)r.read_shares_rows(step, "u", {2, 3, 4}); });
      try {
        (void)r.read_shares_rows(step, "u", {3});
      } catch (const FileError& e) {
        what = e.what();
      }
      return what;
    };
    CHECK_THAT(message(1), Catch::Contains("shares/u") && Catch::Contains("row 3"));
    CHECK_THAT(message(2), Catch::Contains("shares/u row 3: share -1 is not a finite value >= 0"));
    CHECK(r.read_shares_rows(1, "u", {2, 4}).size() == 16);  // the other rows read
    CHECK(r.read_shares_rows(2, "v", {3}).size() == 8);
  }
  SECTION("a step whose writer died before its committed marker") {
    const std::string p = "kernel_test_bad_uncommitted.h5";
    {
      IoOptions opt;
      opt.write_views = false;
      WriterEnv dies;
      dies.on_phase = [](const char* ph) {
        if (std::string(ph) == "flushed") throw std::runtime_error("simulated death");
      };
      ToyModel m = ToyModel::build(MPI_COMM_SELF);
      {
        Writer w = Writer::create(MPI_COMM_SELF, p, ToyModel::common(), opt);
        w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe());
      }
      Writer w = Writer::append(MPI_COMM_SELF, p, opt, dies);
      CHECK_THROWS(w.write_step(ToyModel::checkpoint_step(2, 0.2, 0.1), m.describe()));
    }
    Reader r = Reader::open(p);
    CHECK(r.steps(true).size() == 1);
    CHECK(r.steps(false).size() == 2);
    CHECK(r.find_step("latest").step == 1);
    expect_error(p, ErrorKind::no_such_step, [&] { (void)r.find_step("2"); });
    expect_error(p, ErrorKind::no_such_step, [&] { (void)r.read_topology(3); });
  }
  SECTION("a step the index lists as committed whose group says it is not is damaged, never passed over") {
    auto p = edited("kernel_test_bad_unmarked.h5", [](hid_t f) {
      hid_t g = H5Gopen2(f, "/simulation/step_00000002", H5P_DEFAULT);
      hid_t a = H5Aopen(g, "committed", H5P_DEFAULT);
      const std::uint8_t zero = 0;
      REQUIRE(H5Awrite(a, H5T_NATIVE_UINT8, &zero) >= 0);
      H5Aclose(a);
      H5Gclose(g);
    });
    Reader r = Reader::open(p);
    CHECK(r.steps(true).size() == 1);
    const auto all = r.steps(false);
    REQUIRE(all.size() == 2);
    CHECK(!all[1].damage.empty());
    CHECK(r.selectable_steps().size() == 2);
    for (const char* sel : {"latest", "#-1", "#1", "2", "t=0.15", "t=5"}) {
      INFO(sel);
      expect_error(p, ErrorKind::corrupt, [&] { (void)r.find_step(sel); });
    }
    try {
      (void)r.find_step("latest");
    } catch (const FileError& e) {
      CHECK(std::string(e.what()).find("step 2 is damaged") != std::string::npos);
      CHECK(std::string(e.what()).find(p + "@1") != std::string::npos);  // the step before it, to name
    }
    CHECK(r.find_step("1").step == 1);
    CHECK(r.find_step("#0").step == 1);
    expect_error(p, ErrorKind::corrupt, [&] { (void)Writer::append(MPI_COMM_SELF, p); });  // would set it aside
  }
  SECTION("a writer never appends to a bad file") {
    std::string data = slurp(kGood);
    for (std::size_t i = 48; i < 2048 && i < data.size(); ++i) data[i] = static_cast<char>(0xA5);
    spit("kernel_test_bad_append.h5", data);
    expect_error("kernel_test_bad_append.h5", ErrorKind::corrupt,
                 [] { (void)Writer::append(MPI_COMM_SELF, "kernel_test_bad_append.h5"); });
  }
}
