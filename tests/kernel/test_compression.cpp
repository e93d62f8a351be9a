// Compressed steps (format 1.5): lossless checkpoints restart bit-exactly on any rank
// count, written by HDF5's collective filtered writes; zfp visualisation steps keep their
// error bound and record it; bad combinations are refused before a file exists.
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>

#include "mpi_test_util.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::ToyModel;

namespace {
constexpr int kT = 3;
constexpr double kDt = 0.01;

MPI_Comm first_ranks(int k) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rwd::test::world_rank() < k ? 0 : MPI_UNDEFINED, rwd::test::world_rank(), &c);
  return c;
}

/// The filter ids of a dataset's pipeline and its layout (serial HDF5 calls, rank-local).
struct Stored {
  H5D_layout_t layout = H5D_LAYOUT_ERROR;
  std::vector<H5Z_filter_t> filters;
  hsize_t chunk_rows = 0;
  bool has_accuracy = false;
  double accuracy = 0;
};
Stored stored(const std::string& file, const std::string& dataset) {
  Stored s;
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  hid_t p = H5Dget_create_plist(d);
  s.layout = H5Pget_layout(p);
  for (int i = 0; i < H5Pget_nfilters(p); ++i) {
    unsigned flags = 0, cd[8];
    std::size_t n = 8;
    s.filters.push_back(H5Pget_filter2(p, static_cast<unsigned>(i), &flags, &n, cd, 0, nullptr, nullptr));
  }
  if (s.layout == H5D_CHUNKED) {
    hsize_t dims[4] = {};
    H5Pget_chunk(p, 4, dims);
    s.chunk_rows = dims[0];
  }
  s.has_accuracy = H5Aexists(d, "zfp_accuracy") > 0;
  if (s.has_accuracy) {
    hid_t a = H5Aopen(d, "zfp_accuracy", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_DOUBLE, &s.accuracy);
    H5Aclose(a);
  }
  H5Pclose(p);
  H5Dclose(d);
  H5Fclose(f);
  return s;
}
}  // namespace

TEST_CASE("a losslessly compressed checkpoint restarts bit-exactly on any rank count", "[kernel][mpi]") {
  const int size = rwd::test::world_size();
  ToyModel ref = ToyModel::build(MPI_COMM_SELF);
  for (int i = 0; i < 2 * kT; ++i) ref.advance(kDt);
  const auto ref_u = ref.interior(0), ref_v = ref.interior(1);
  const std::pair<const char*, H5Z_filter_t> filters[] = {{"deflate", H5Z_FILTER_DEFLATE}, {"lz4", 32004}, {"bitshuffle", 32008}};
  for (const auto& [name, id] : filters) {
    INFO("compression = " << name);
    IoOptions opt;
    opt.write_views = false;
    set_option(opt, "compression", std::string(name));
    opt.chunk_grids = 4;  // 33 grids: chunks shared by two ranks on 2-4 ranks
    const std::string path = rwd::kernel::test::test_path(std::string("compressed_") + name);
    WriteStats st;
    {
      ToyModel m = ToyModel::build(MPI_COMM_WORLD);
      Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
      for (int i = 1; i <= kT; ++i) {
        m.advance(kDt);
        st = w.write_step({i, i * kDt, kDt, i == kT ? StepKind::checkpoint : StepKind::visualisation,
                           i == kT ? ToyModel::checkpoint_fields() : ToyModel::visual_fields(true), true, {}, {}},
                          m.describe());
      }
      w.close();
    }
    CHECK(st.all_collective);
    CHECK(st.in_place.direct_datasets == 0);  // no zero copy into a filtered dataset
    const Stored u = stored(path, "/simulation/step_00000003/cell_data/u");
    CHECK(u.layout == H5D_CHUNKED);
    CHECK(u.chunk_rows == 4);
    CHECK(std::find(u.filters.begin(), u.filters.end(), id) != u.filters.end());
    CHECK(stored(path, "/simulation/step_00000003/cell_type").layout == H5D_CHUNKED);
    CHECK(stored(path, "/simulation/step_00000003/uid").layout == H5D_CONTIGUOUS);  // topology stays contiguous
    CHECK(Reader::open(path).verify_step(kT).problems.empty());
    for (int mr = 1; mr <= size; ++mr) {
      MPI_Comm rc = first_ranks(mr);
      if (rc != MPI_COMM_NULL) {
        INFO("restarted on " << mr << " of " << size << " ranks");
        Reader r = Reader::open(path, rc);
        ToyModel m = ToyModel::restart(r, kT, rc);
        for (int i = kT; i < 2 * kT; ++i) m.advance(kDt);
        bool same = true;
        for (const auto& [uid, v] : m.interior(0)) same = same && rwd::kernel::test::bit_equal(v, ref_u.at(uid));
        for (const auto& [uid, v] : m.interior(1)) same = same && rwd::kernel::test::bit_equal(v, ref_v.at(uid));
        CHECK(same);
        MPI_Comm_free(&rc);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

TEST_CASE("zfp visualisation steps stay within their recorded error bound; checkpoints stay lossless", "[kernel][mpi]") {
  const double bound = 1e-4;
  IoOptions opt;
  opt.statistics = true;  // their datasets are checksummed too
  opt.write_views = false;
  opt.visualisation_compression = Codec::zfp;
  opt.zfp_accuracy = bound;
  const std::string path = rwd::kernel::test::test_path("zfp");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    w.write_step(ToyModel::visual_step(1, kDt, kDt, false, true), m.describe());
    w.write_step(ToyModel::visual_step(2, 2 * kDt, kDt, true, true), m.describe());
    w.write_step(ToyModel::checkpoint_step(3, 3 * kDt, kDt), m.describe());
    w.close();
  }
  for (const char* step : {"step_00000001", "step_00000002"}) {
    const Stored s = stored(path, std::string("/simulation/") + step + "/cell_data/u");
    CHECK(s.layout == H5D_CHUNKED);
    CHECK(std::find(s.filters.begin(), s.filters.end(), 32013) != s.filters.end());
    CHECK(s.has_accuracy);
    CHECK(s.accuracy == bound);
  }
  const Stored ck = stored(path, "/simulation/step_00000003/cell_data/u");
  CHECK(ck.layout == H5D_CONTIGUOUS);  // checkpoints never lossy
  CHECK_FALSE(ck.has_accuracy);
  // Every value read back is within the bound (float64 step) or the bound plus float32
  // rounding (float32 step), on every rank's rows.
  Reader r = Reader::open(path, MPI_COMM_WORLD);
  const StepTopology topo = r.read_topology(1);
  const auto rows = partition_rows(topo, rwd::test::world_rank(), rwd::test::world_size());
  const std::size_t cells = 64;
  const auto original = ToyModel::build(MPI_COMM_SELF).interior(0);
  for (const std::int64_t step : {1, 2}) {
    std::vector<double> got(rows.size() * cells);
    r.read_rows(step, "cell_data", "u", rows, got.data());
    double worst = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& want = original.at(topo.uid[static_cast<std::size_t>(rows[i])]);
      for (std::size_t k = 0; k < cells; ++k) {
        const double ref = step == 2 ? static_cast<double>(static_cast<float>(want[k])) : want[k];
        worst = std::max(worst, std::abs(got[i * cells + k] - ref));
      }
    }
    INFO("step " << step << ": max |x - x~| = " << worst);
    CHECK(worst <= bound * (step == 2 ? 1.0001 : 1.0));
    CHECK(worst > 0);  // lossy indeed: the test would notice the filter doing nothing
  }
  // zfp datasets have no row checksum; verification covers the others.
  const auto v = Reader::open(path).verify_step(1);
  CHECK(v.problems.empty());
  // 9 topology datasets + cell_type + 2 statistics + 2 shares; no column for the zfp field u
  CHECK(v.datasets == 10 + 4);
}

TEST_CASE("compression options that cannot work are refused before the file exists", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("refused");
  if (rwd::test::world_rank() == 0) std::filesystem::remove(path);
  MPI_Barrier(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  opt.compression = Codec::deflate;
  opt.collective_transfer = false;
  CHECK_THROWS_WITH(Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt),
                    Catch::Contains("needs collective_transfer = true"));
  opt.collective_transfer = true;
  opt.compression = Codec::none;
  opt.visualisation_compression = Codec::zfp;
  CHECK_THROWS_WITH(Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt), Catch::Contains("zfp_accuracy > 0"));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_FALSE(std::filesystem::exists(path));
}
