// Exact restart: run to 2T straight vs. run to T, write, restart, run to 2T — bit-identical,
// on the same and on different rank counts (write on a sub-communicator of k ranks,
// restart on m ranks, for all k, m <= world size: covers 4->2 and 2->3).
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>

#include "mpi_test_util.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::ToyModel;

namespace {
constexpr int kT = 5;         // steps to the checkpoint
constexpr double kDt = 0.01;

/// Runs the straight reference on one rank (the stepper is partition-independent).
std::map<std::uint64_t, std::vector<double>> reference(int slot) {
  ToyModel m = ToyModel::build(MPI_COMM_SELF);
  for (int i = 0; i < 2 * kT; ++i) m.advance(kDt);
  return m.interior(slot);
}

MPI_Comm first_ranks(int k) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rwd::test::world_rank() < k ? 0 : MPI_UNDEFINED, rwd::test::world_rank(), &c);
  return c;
}

/// Writes steps 1 … n and then step n + 1 up to its data's flush: every rank stops before
/// the commit marker, as a job killed there leaves the file.
void write_step_cut_short(const std::string& path, int n = 1) {
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    for (int s = 1; s <= n; ++s) w.write_step(ToyModel::checkpoint_step(s, 0.1 * s, 0.1), m.describe());
  }
  {
    WriterEnv dies;  // every rank stops after the data flush, before the marker
    dies.on_phase = [](const char* ph) {
      if (std::string(ph) == "flushed") throw std::runtime_error("simulated death");
    };
    Writer w = Writer::append(MPI_COMM_WORLD, path, opt, dies);
    CHECK_THROWS(w.write_step(ToyModel::checkpoint_step(n + 1, 0.1 * (n + 1), 0.1), m.describe()));
  }
}
}  // namespace

TEST_CASE("restart continues bit-exactly on the same and on other rank counts", "[kernel][mpi]") {
  const int size = rwd::test::world_size();
  const auto ref_u = reference(0), ref_v = reference(1);
  IoOptions opt;
  opt.write_views = false;
  for (int k = 1; k <= size; ++k) {
    const std::string path = rwd::kernel::test::test_path("restart_w" + std::to_string(k));
    MPI_Comm wc = first_ranks(k);
    if (wc != MPI_COMM_NULL) {
      ToyModel m = ToyModel::build(wc);
      Writer w = Writer::create(wc, path, ToyModel::common(), opt);
      for (int i = 1; i <= kT; ++i) {
        m.advance(kDt);
        // a visualisation step each step, a checkpoint at T only
        w.write_step({i, i * kDt, kDt, i == kT ? StepKind::checkpoint : StepKind::visualisation,
                      i == kT ? ToyModel::checkpoint_fields() : ToyModel::visual_fields(true), i == kT, {}, {}},
                     m.describe());
      }
      w.close();
      MPI_Comm_free(&wc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int mr = 1; mr <= size; ++mr) {
      MPI_Comm rc = first_ranks(mr);
      if (rc != MPI_COMM_NULL) {
        INFO("written on " << k << " ranks, restarted on " << mr);
        Reader r = Reader::open(path, rc);
        StepEntry e = r.find_step("latest");
        REQUIRE(e.step == kT);
        CHECK(e.kind == StepKind::checkpoint);
        ToyModel m = ToyModel::restart(r, e.step, rc);
        for (int i = kT; i < 2 * kT; ++i) m.advance(kDt);
        bool same = true;
        for (const auto& [uid, v] : m.interior(0)) same = same && rwd::kernel::test::bit_equal(v, ref_u.at(uid));
        for (const auto& [uid, v] : m.interior(1)) same = same && rwd::kernel::test::bit_equal(v, ref_v.at(uid));
        CHECK(same);
        long long n = static_cast<long long>(m.grids.size()), total = 0;
        MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, rc);
        CHECK(total == 33);
        MPI_Comm_free(&rc);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

TEST_CASE("steps are selected by number, index, time or latest", "[kernel]") {
  const std::string path = rwd::kernel::test::test_path("select");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    for (int i : {3, 6, 9}) w.write_step(ToyModel::checkpoint_step(i, i * 0.1, 0.1), m.describe());
  }
  Reader r = Reader::open(path);
  CHECK(r.find_step("latest").step == 9);
  CHECK(r.find_step("6").step == 6);
  CHECK(r.find_step("#0").step == 3);
  CHECK(r.find_step("#-1").step == 9);
  CHECK(r.find_step("t=0.65").step == 6);
  CHECK(r.find_step("t=0.6").step == 6);
  CHECK_THROWS_AS(r.find_step("7"), FileError);
  CHECK_THROWS_AS(r.find_step("t=0.1"), FileError);
  CHECK_THROWS_AS(r.find_step("#5"), FileError);
  try {
    (void)r.find_step("bogus");
  } catch (const FileError& e) {
    CHECK(e.kind() == ErrorKind::no_such_step);
    CHECK(std::string(e.what()).find(path) == 0);
  }
}

TEST_CASE("a restart's checkpoint: latest and t=T pass over visualisation steps (select_checkpoint)", "[kernel]") {
  // Checkpoints at steps 0 and 20, visualisation steps at 10 and 30 (the last).
  std::vector<StepEntry> all;
  for (int i = 0; i < 4; ++i) {
    StepEntry e;
    e.step = 10 * i;
    e.time = i;
    e.kind = i % 2 == 0 ? StepKind::checkpoint : StepKind::visualisation;
    e.committed = true;
    all.push_back(e);
  }
  std::string note;
  CHECK(select_checkpoint(all, "latest", "f.h5", &note).step == 20);
  CHECK(note.empty());
  CHECK(select_checkpoint(all, "t=3", "f.h5", &note).step == 20);
  CHECK(note == "t=3: step 30 (t = 3) is a visualisation output; restarting from the last checkpoint at or before "
                "it, step 20 (t = 2)");
  CHECK(select_checkpoint(all, "t=1.5", "f.h5", &note).step == 0);
  CHECK(note.find("step 10") != std::string::npos);
  CHECK(select_checkpoint(all, "t=2.5", "f.h5", &note).step == 20);
  CHECK(note == time_selector_note("t=2.5", all[2]));
  CHECK(select_checkpoint(all, "#0", "f.h5", &note).step == 0);
  CHECK(note.empty());
  try {
    (void)select_checkpoint(all, "30", "f.h5");
    FAIL("a visualisation step named by number was taken");
  } catch (const FileError& e) {
    CHECK(e.kind() == ErrorKind::no_such_step);
    CHECK(std::string(e.what()).find("checkpoints: 0 (t=0), 20 (t=2)") != std::string::npos);
  }
  all[2].damage = "its group cannot be read";  // the checkpoint on the way is damaged: never passed over
  CHECK_THROWS_MATCHES(select_checkpoint(all, "latest", "f.h5"), FileError,
                       Catch::Matchers::Predicate<FileError>([](const FileError& e) {
                         return e.kind() == ErrorKind::corrupt &&
                                std::string(e.what()).find("name it (f.h5@0)") != std::string::npos;
                       }));
  all[0].kind = StepKind::visualisation;
  all[2] = all[0];
  all[2].step = 20;
  CHECK_THROWS_WITH(select_checkpoint(all, "latest", "f.h5"), Catch::Contains("no committed checkpoint"));
}

TEST_CASE("a step whose commit never happened is refused by number on every rank", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("uncommitted");
  write_step_cut_short(path);
  Reader r = Reader::open(path, MPI_COMM_WORLD);
  CHECK(r.step(1).committed);
  CHECK(r.step(2, /*allow_uncommitted=*/true).step == 2);
  CHECK_FALSE(r.step(2, true).committed);
  try {
    (void)r.step(2);
    FAIL("step 2 has no committed marker, yet step(2) returned it");
  } catch (const FileError& e) {
    CHECK(e.kind() == ErrorKind::no_such_step);
  }
  ToyModel back = ToyModel::restart(r, 1, MPI_COMM_WORLD);  // the committed step still restarts
  long long n = static_cast<long long>(back.grids.size()), total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == 33);
}

TEST_CASE("a run continues in the same file after a restart (append)", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("append");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe());
  }
  {
    Writer w = Writer::append(MPI_COMM_WORLD, path, opt);
    CHECK(w.last_step() == 1);
    CHECK_THROWS_AS(w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe()), FileError);
    w.write_step(ToyModel::checkpoint_step(2, 0.2, 0.1), m.describe());
    w.close();
  }
  Reader r = Reader::open(path);
  CHECK(r.steps().size() == 2);
}

namespace {
/// Sets a step group's `committed` attribute with plain HDF5 on rank 0 (the file closed):
/// what a node lost in the middle of a flush leaves when its part of the metadata (the
/// attribute) never reached the disk while rank 0's (the index row) did.
void set_committed(const std::string& path, std::int64_t step, std::uint8_t v) {
  if (rwd::test::world_rank() == 0) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    char name[64];
    std::snprintf(name, sizeof name, "/simulation/step_%08lld", static_cast<long long>(step));
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    REQUIRE(g >= 0);
    hid_t a = H5Aopen(g, "committed", H5P_DEFAULT);
    REQUIRE(a >= 0);
    CHECK(H5Awrite(a, H5T_NATIVE_UINT8, &v) >= 0);
    H5Aclose(a);
    H5Gclose(g);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Labels the file as written in format 1.<minor> (rank 0, the file closed).
void set_format_minor(const std::string& path, std::int64_t minor) {
  if (rwd::test::world_rank() == 0) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
    REQUIRE(a >= 0);
    const std::int64_t v[2] = {1, minor};
    CHECK(H5Awrite(a, H5T_NATIVE_INT64, v) >= 0);
    H5Aclose(a);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

std::string index_problems(const std::string& path) {
  std::string all;
  for (const auto& p : Reader::open(path).check_index()) all += p.problem + "; ";
  return all;
}
}  // namespace

TEST_CASE("append repairs an index row whose step's commit was torn (a node lost mid-flush)", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("torn_commit");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    w.write_step({1, 0.1, 0.1, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, {}, {}}, m.describe());
    w.write_step({2, 0.2, 0.1, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, {}, {}}, m.describe());
  }
  set_committed(path, 2, 0);  // the index lists step 2, its group is not committed
  CHECK_FALSE(index_problems(path).empty());
  // From format 1.7 the row follows the flag in a flush of its own: this is damage, which
  // a continue would hide. Before 1.7 the two shared one flush: a torn commit, repaired.
  CHECK_THROWS_AS(Writer::append(MPI_COMM_WORLD, path, opt), FileError);
  set_format_minor(path, 6);
  {
    Writer w = Writer::append(MPI_COMM_WORLD, path, opt);  // drops step 2 and its row
    CHECK(w.last_step() == 1);
    w.write_step({2, 0.25, 0.15, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, {}, {}}, m.describe());
    w.close();
  }
  INFO(index_problems(path));
  CHECK(index_problems(path).empty());  // before the repair: a stale row for step 2 (t=0.2) and the new one
  Reader r = Reader::open(path);
  REQUIRE(r.steps().size() == 2);
  CHECK(r.step(2).time == 0.25);
}

TEST_CASE("append lists a committed step whose index row was never written", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("unindexed");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    w.write_step({1, 0.1, 0.1, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, {}, {}}, m.describe());
  }
  {
    WriterEnv dies;  // every rank stops once the marker is flushed, before the index row
    dies.on_phase = [](const char* ph) {
      if (std::string(ph) == "marked") throw std::runtime_error("simulated death");
    };
    Writer w = Writer::append(MPI_COMM_WORLD, path, opt, dies);
    CHECK_THROWS(w.write_step({2, 0.2, 0.1, StepKind::checkpoint, ToyModel::checkpoint_fields(), true, {}, {}}, m.describe()));
  }
  CHECK(Reader::open(path).step(2).committed);  // committed: the group is the authority
  INFO(index_problems(path));
  CHECK(index_problems(path).empty());  // the index lagging by its last step is no damage (verify passes)
  { Writer w = Writer::append(MPI_COMM_WORLD, path, opt); CHECK(w.last_step() == 2); }
  INFO(index_problems(path));
  CHECK(index_problems(path).empty());
}

TEST_CASE("large grids round-trip exactly (no-halo copy path, independent bulk reads)", "[kernel][mpi]") {
  // 24^3 float64 cells = 110 KiB per grid and field: rows runs are large enough for the
  // reader's independent transfer, and halo 0 takes the writer's contiguous-copy path.
  constexpr int kBlock = 24;
  for (int halo : {0, 1}) {
    INFO("halo " << halo);
    const std::string path = rwd::kernel::test::test_path("large_h" + std::to_string(halo));
    ToyModel ref = ToyModel::build(MPI_COMM_SELF, kBlock, halo);
    ref.advance(kDt);
    {
      ToyModel m = ToyModel::build(MPI_COMM_WORLD, kBlock, halo);
      m.advance(kDt);
      IoOptions opt;
      opt.write_views = false;
      Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(kBlock), opt);
      w.write_step(ToyModel::checkpoint_step(1, kDt, kDt), m.describe());
      w.close();
    }
    Reader r = Reader::open(path, MPI_COMM_WORLD);
    ToyModel back = ToyModel::restart(r, 1, MPI_COMM_WORLD, halo);
    bool same = true;
    for (int s = 0; s < 6; ++s) {
      const auto want = ref.interior(s);
      for (const auto& [uid, v] : back.interior(s)) same = same && rwd::kernel::test::bit_equal(v, want.at(uid));
    }
    CHECK(same);
    long long n = static_cast<long long>(back.grids.size()), total = 0;
    MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == 33);
  }
}

namespace {
/// Overwrites the object header of the first dataset under `group` with zeros (rank 0,
/// the file closed): what a node lost in the middle of the dedicated I/O rank's write
/// leaves when the step group's header reached the disk and a dataset's did not.
void erase_a_dataset_header(const std::string& path, const std::string& group) {
  if (rwd::test::world_rank() == 0) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    haddr_t addr = HADDR_UNDEF;
    const auto first_dataset = [](hid_t loc, const char* name, const H5O_info_t* info, void* out) -> herr_t {
      if (info->type != H5O_TYPE_DATASET || name[0] == '.') return 0;
      *static_cast<haddr_t*>(out) = info->addr;
      return 1;
    };
    REQUIRE(H5Ovisit_by_name(f, group.c_str(), H5_INDEX_NAME, H5_ITER_NATIVE, first_dataset, &addr, H5P_DEFAULT) > 0);
    H5Fclose(f);
    REQUIRE(addr != HADDR_UNDEF);
    std::FILE* out = std::fopen(path.c_str(), "r+b");
    REQUIRE(out != nullptr);
    const std::vector<char> zeros(64, 0);
    REQUIRE(std::fseek(out, static_cast<long>(addr), SEEK_SET) == 0);
    REQUIRE(std::fwrite(zeros.data(), 1, zeros.size(), out) == zeros.size());
    std::fclose(out);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
}  // namespace

TEST_CASE("append sets aside an uncommitted step whose dataset never reached the file", "[kernel][mpi]") {
  // 1 step before it: /simulation keeps its links in its header; 10: in a B-tree (dense
  // storage, more than 8 links), where the unlink failed in CI.
  const int n = GENERATE(1, 10);
  const std::string path = rwd::kernel::test::test_path("half_written_step_" + std::to_string(n));
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  write_step_cut_short(path, n);
  char cut[64], aside[64];
  std::snprintf(cut, sizeof cut, "/simulation/step_%08d", n + 1);
  std::snprintf(aside, sizeof aside, "/simulation/uncommitted_step_%08d", n + 1);
  erase_a_dataset_header(path, cut);
  {
    // Unlinking the step would free its subtree, which HDF5 cannot read: the continue moves
    // it aside instead of stopping the run, and writes the step afresh.
    Writer w = Writer::append(MPI_COMM_WORLD, path, opt);
    CHECK(w.last_step() == n);
    m.advance(0.1);
    w.write_step(ToyModel::checkpoint_step(n + 1, 0.1 * (n + 1), 0.1), m.describe());
    w.close();
  }
  {
    Reader r = Reader::open(path, MPI_COMM_WORLD);
    REQUIRE(r.steps().size() == static_cast<std::size_t>(n + 1));
    CHECK(r.step(n + 1).committed);
    ToyModel back = ToyModel::restart(r, n + 1, MPI_COMM_WORLD);
    ToyModel ref = ToyModel::build(MPI_COMM_SELF);  // the state written as step n + 1, on one rank
    ref.advance(0.1);
    for (int slot = 0; slot < 2; ++slot) {
      const auto want = ref.interior(slot);
      for (const auto& [uid, v] : back.interior(slot)) CHECK(rwd::kernel::test::bit_equal(v, want.at(uid)));
    }
    CHECK(r.check_index().empty());
  }
  if (rwd::test::world_rank() == 0) {  // the half-written step is kept, where readers do not look
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(H5Lexists(f, aside, H5P_DEFAULT) > 0);
    H5Fclose(f);
  }
}
