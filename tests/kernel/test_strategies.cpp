// The write strategies (IoOptions::strategy): every one writes the same file — the same
// rows in the same order, restarting bit-exactly — whoever does the writing. "dedicated"
// runs with the last world rank as the I/O rank of every other one (one node here).
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "io/direct_io.hpp"
#include "mpi_test_util.hpp"
#include "rewind/kernel/read_breakdown.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::DedicatedLayout;
using rwd::kernel::test::ToyModel;

namespace {
constexpr int kSteps = 4;  // checkpoints 2 and 4, visualisation steps between
constexpr double kDt = 0.01;

StepInfo step_info(int i) {
  const bool cp = i % 2 == 0;
  return {i, i * kDt, kDt, cp ? StepKind::checkpoint : StepKind::visualisation,
          cp ? ToyModel::checkpoint_fields() : ToyModel::visual_fields(i == 1), cp, {}, {cp ? 0.5 * i : 0.0}};
}

/// Writes kSteps steps of the toy model through `comm` with `opt` (after Writer::prepare
/// for a checkpoint, with `prepare`); returns the last stats.
WriteStats write_run(MPI_Comm comm, const std::string& path, const IoOptions& opt, bool prepare = false, int block = 4,
                     const WriterEnv& env = {}) {
  ToyModel m = ToyModel::build(comm, block);
  Writer w = Writer::create(comm, path, ToyModel::common(block), opt, env);
  if (prepare) w.prepare(step_info(2), m.describe());
  WriteStats last;
  for (int i = 1; i <= kSteps; ++i) {
    m.advance(kDt);
    last = w.write_step(step_info(i), m.describe());
  }
  w.close();
  return last;
}

/// Restarts from step kSteps on the world and compares with a model run straight there.
bool restarts_exactly(const std::string& path, int block = 4) {
  ToyModel ref = ToyModel::build(MPI_COMM_SELF, block);
  for (int i = 0; i < kSteps; ++i) ref.advance(kDt);
  Reader r = Reader::open(path, MPI_COMM_WORLD);
  ToyModel back = ToyModel::restart(r, kSteps, MPI_COMM_WORLD);
  bool same = true;
  for (int s = 0; s < 6; ++s) {
    const auto want = ref.interior(s);
    for (const auto& [uid, v] : back.interior(s)) same = same && rwd::kernel::test::bit_equal(v, want.at(uid));
  }
  return rwd::test::all_ranks(same);
}

/// What a user sees of a file: the step list and every row's uid and rank (the compute
/// rank that computed it, whoever wrote it), per step.
std::string file_summary(const std::string& path) {
  Reader r = Reader::open(path);
  std::string s;
  for (const auto& e : r.steps()) {
    s += std::to_string(e.step) + (e.committed ? "c" : "u") + std::to_string(static_cast<int>(e.kind)) + ":";
    const auto topo = r.read_topology(e.step);
    for (std::size_t i = 0; i < topo.uid.size(); ++i)
      s += std::to_string(topo.uid[i]) + "@" + std::to_string(topo.rank[i]) + ",";
    s += "|";
  }
  return s;
}

}  // namespace

TEST_CASE("collective, independent and aggregated write the same file", "[kernel][mpi]") {
  IoOptions base;
  base.write_views = false;
  const std::string ref_path = rwd::kernel::test::test_path("strategy_collective");
  write_run(MPI_COMM_WORLD, ref_path, base);
  const std::string want = file_summary(ref_path);
  for (const char* strategy : {"independent", "aggregated"}) {
    INFO("strategy " << strategy);
    IoOptions opt = base;
    set_option(opt, "strategy", std::string(strategy));
    const std::string path = rwd::kernel::test::test_path(std::string("strategy_") + strategy);
    const WriteStats st = write_run(MPI_COMM_WORLD, path, opt, true);  // prepare: the same file
    CHECK(st.handoff.handed_off == (std::string(strategy) == "aggregated"));
    if (std::string(strategy) == "independent") CHECK_FALSE(st.all_collective);
    CHECK(file_summary(path) == want);
    CHECK(restarts_exactly(path));
  }
}

TEST_CASE("auto: long row runs go by independent transfers, short or filtered ones collectively; the same file",
          "[kernel][mpi]") {
  // 33 grids on 3 levels. Block 16: a field row is 32 KiB, so a field's runs average
  // 33 * 32 KiB / (3 levels * ranks) >= 88 KiB on 1-4 ranks: independent. Block 4: 512 B
  // rows, 17 KiB a field in all: every dataset collective.
  IoOptions collective;
  collective.write_views = false;
  collective.strategy = Strategy::collective;
  IoOptions automatic = collective;
  automatic.strategy = Strategy::automatic;
  CHECK(IoOptions{}.strategy == Strategy::automatic);  // the default
  for (int block : {16, 4}) {
    INFO("block " << block);
    const std::string tag = "_b" + std::to_string(block);
    const std::string ref_path = rwd::kernel::test::test_path("strategy_auto_ref" + tag);
    CHECK(write_run(MPI_COMM_WORLD, ref_path, collective, false, block).all_collective);
    const std::string path = rwd::kernel::test::test_path("strategy_auto" + tag);
    const WriteStats st = write_run(MPI_COMM_WORLD, path, automatic, false, block);
    CHECK(st.all_collective == (block == 4));
    CHECK(file_summary(path) == file_summary(ref_path));
    CHECK(restarts_exactly(path, block));
  }
  // Filtered datasets are written collectively whatever their runs (HDF5 needs it).
  IoOptions deflate = automatic;
  deflate.compression = Codec::deflate;
  const std::string path = rwd::kernel::test::test_path("strategy_auto_deflate");
  CHECK(write_run(MPI_COMM_WORLD, path, deflate, false, 16).all_collective);
  CHECK(restarts_exactly(path, 16));
  // "independent" cannot write filtered datasets: refused before anything is written.
  IoOptions bad = deflate;
  bad.strategy = Strategy::independent;
  CHECK_THAT(options_problem(bad), Catch::Contains("'compression' needs collective transfers, not strategy = \"independent\""));
}

TEST_CASE("dedicated I/O ranks write the same file while the compute ranks go on", "[kernel][mpi]") {
  if (rwd::test::world_size() < 2) {
    // One process cannot have an I/O rank: refused with one line naming the cure.
    CHECK_THAT(rwd::kernel::test::dedicated_alone_error("dedicated_alone"), Catch::Contains("needs I/O ranks"));
    return;
  }
  IoOptions base;
  base.write_views = false;
  // The reference: the same compute ranks writing collectively.
  DedicatedLayout lay;
  const std::string ref_path = rwd::kernel::test::test_path("dedicated_ref");
  if (!lay.is_io) write_run(lay.compute, ref_path, base);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string want = file_summary(ref_path);
  for (int variant : {1, 2, 3}) {  // steps in flight 1, 2; 1 with the window prepared first
    const int in_flight = variant == 2 ? 2 : 1;
    const bool prepare = variant == 3;
    INFO("steps in flight " << in_flight << (prepare ? ", prepared" : ""));
    const std::string path = rwd::kernel::test::test_path("dedicated_f" + std::to_string(variant));
    if (lay.is_io) {
      const IoRankStats st = serve_io_ranks(lay.group, lay.io);
      CHECK(st.steps == kSteps);
    } else {
      IoOptions opt = base;
      opt.strategy = Strategy::dedicated;
      opt.steps_in_flight = in_flight;
      const WriteStats st = write_run(lay.compute, path, opt, prepare, 4, WriterEnv{lay.group, {}});
      CHECK(st.handoff.handed_off);
      CHECK(st.n_grids == 33);
      CHECK(st.handoff.written_step == kSteps - in_flight);  // the write before this one had finished
      release_io_ranks(lay.group);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(file_summary(path) == want);  // every step committed, the same rows
    CHECK(restarts_exactly(path));
  }
}

namespace {
/// Every cell of every step, as a user reading the file sees it: the step's datasets
/// (serial reader, every row), bytes as read.
std::string file_cells(const std::string& path) {
  Reader r = Reader::open(path);
  std::string s;
  for (const auto& e : r.steps()) {
    const auto n = static_cast<std::int64_t>(r.read_topology(e.step).uid.size());
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
    const std::size_t cells = static_cast<std::size_t>(r.common().block.cells()) * rows.size();
    const StepInfo info = step_info(static_cast<int>(e.step));
    for (const auto& f : info.fields) {
      std::vector<double> v(cells);
      r.read_rows(e.step, f.group, f.name, rows, v.data());
      s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
    }
    if (!info.write_cell_type) continue;
    std::vector<std::uint8_t> t(cells);
    r.read_cell_types(e.step, rows, t.data());
    s.append(reinterpret_cast<const char*>(t.data()), t.size());
  }
  return s;
}

/// What a code computing its output in the writer's memory does: the step's arrays
/// (the interiors of `own`'s) produced in `span`.
void fill_span(const LocalGrids& span, const LocalGrids& own, const StepInfo& info) {
  const BlockShape b = own.block;
  const int h = own.halo, px = b.sx + 2 * h, py = b.sy + 2 * h;
  auto interior = [&](const auto* src, auto* dst) {
    for (int z = 0; z < b.sz; ++z)
      for (int y = 0; y < b.sy; ++y)
        for (int x = 0; x < b.sx; ++x) *dst++ = src[((z + h) * py + y + h) * px + x + h];
  };
  for (std::size_t g = 0; g < own.grids.size(); ++g) {
    for (const auto& f : info.fields) {
      const auto sl = static_cast<std::size_t>(f.slot);
      interior(own.grids[g].fields[sl], const_cast<double*>(span.grids[g].fields[sl]));
    }
    if (info.write_cell_type) interior(own.grids[g].cell_type, const_cast<std::uint8_t*>(span.grids[g].cell_type));
  }
}

/// write_run, every step computed in Writer::span; checks what the spans said.
void write_run_in_spans(MPI_Comm comm, const std::string& path, const IoOptions& opt, const WriterEnv& env = {}) {
  ToyModel m = ToyModel::build(comm);
  Writer w = Writer::create(comm, path, ToyModel::common(), opt, env);
  const bool handed = opt.strategy == Strategy::dedicated || opt.strategy == Strategy::aggregated;
  std::vector<const double*> seen;  // each span's first array
  // Two slots: sized for the largest step first, so they stay put; one slot: the window
  // grows at the first checkpoint, under the span it lends.
  const bool prepared = handed && opt.steps_in_flight == 2;
  if (prepared) w.prepare(step_info(2), m.describe());
  for (int i = 1; i <= kSteps; ++i) {
    m.advance(kDt);
    const StepInfo info = step_info(i);
    const LocalGrids own = m.describe();
    const LocalGrids span = w.span(info, own);
    CHECK(span.halo == 0);
    if (prepared && !span.grids.empty()) {
      // Slots in turn: step i's span lies where step i - 2's did, not where i - 1's is
      // still being written from.
      seen.push_back(span.grids[0].fields[0]);
      if (seen.size() > 2) CHECK(seen[seen.size() - 1] == seen[seen.size() - 3]);
      if (seen.size() > 1) CHECK(seen[seen.size() - 1] != seen[seen.size() - 2]);
    }
    CHECK(span.grids.size() == own.grids.size());
    fill_span(span, own, info);
    const WriteStats st = w.write_step(info, span);
    CHECK(st.handoff.handed_off == handed);
    CHECK(st.handoff.copied_bytes == 0);  // the step went over as it was: no pass over its data
    CHECK(st.n_grids == 33);
  }
  // A hand-off of the code's own arrays copies them (the comparison above means something).
  if (handed) {
    m.advance(kDt);
    CHECK(w.write_step(step_info(kSteps + 1), m.describe()).handoff.copied_bytes > 0);
  }
  w.close();
}
}  // namespace

TEST_CASE("steps computed in Writer::span go over without a copy and make the same file, whoever writes",
          "[kernel][mpi]") {
  IoOptions base;
  base.write_views = false;
  DedicatedLayout lay;
  const bool dedicated = rwd::test::world_size() >= 2;
  // The reference: the compute ranks writing their own arrays collectively.
  const std::string ref_path = rwd::kernel::test::test_path("span_ref");
  if (!lay.is_io || !dedicated) write_run(dedicated ? lay.compute : MPI_COMM_WORLD, ref_path, base);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string want = file_cells(ref_path);
  // Dedicated twice: one slot (each span waits for the step before), and two (a span is
  // filled while the step before is written from the other).
  for (const char* strategy : {"collective", "aggregated", "dedicated", "dedicated2"}) {
    const bool io_ranks = std::string(strategy).rfind("dedicated", 0) == 0;
    if (io_ranks && !dedicated) continue;
    INFO("strategy " << strategy);
    const std::string path = rwd::kernel::test::test_path(std::string("span_") + strategy);
    IoOptions opt = base;
    set_option(opt, "strategy", std::string(io_ranks ? "dedicated" : strategy));
    opt.steps_in_flight = std::string(strategy) == "dedicated2" ? 2 : 1;
    if (io_ranks) {
      if (lay.is_io) {
        CHECK(serve_io_ranks(lay.group, lay.io).steps == kSteps + 1);
      } else {
        write_run_in_spans(lay.compute, path, opt, WriterEnv{lay.group, {}});
        release_io_ranks(lay.group);
      }
    } else if (!lay.is_io || !dedicated) {
      write_run_in_spans(dedicated ? lay.compute : MPI_COMM_WORLD, path, opt);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string got = file_cells(path);
    // A handed-off run in spans wrote one step more (the copied one); the first kSteps are
    // the same.
    CHECK(got.substr(0, want.size()) == want);
    CHECK((got.size() > want.size()) == (std::string(strategy) != "collective"));
  }
}

TEST_CASE("dedicated: a span given to a hand-off it was not taken for is refused on every rank, named",
          "[kernel][mpi]") {
  if (rwd::test::world_size() < 2) {  // no I/O rank at one process: refused, naming the cure
    CHECK_THAT(rwd::kernel::test::dedicated_alone_error("dedicated_alone"), Catch::Contains("needs I/O ranks"));
    return;
  }
  DedicatedLayout lay;
  const std::string path = rwd::kernel::test::test_path("span_misused");
  IoOptions opt;
  opt.write_views = false;
  opt.strategy = Strategy::dedicated;
  if (lay.is_io) {
    CHECK(serve_io_ranks(lay.group, lay.io).steps == 1);
  } else {
    ToyModel m = ToyModel::build(lay.compute);
    Writer w = Writer::create(lay.compute, path, ToyModel::common(), opt, WriterEnv{lay.group, {}});
    m.advance(kDt);
    // Taken for a checkpoint (six fields), handed over as a visualisation step (two).
    const LocalGrids span = w.span(step_info(2), m.describe());
    fill_span(span, m.describe(), step_info(2));
    try {
      (void)w.write_step(step_info(1), span);
      FAIL("a span was handed over for a step it was not taken for");
    } catch (const FileError& e) {
      CHECK(e.kind() == ErrorKind::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains("step 1: a span (Writer::span)"));
    }
    // The writer goes on: the next step, from the code's own arrays, is written.
    CHECK(w.write_step(step_info(2), m.describe()).handoff.copied_bytes > 0);
    w.close();
    release_io_ranks(lay.group);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Reader r = Reader::open(path);
  REQUIRE(r.steps().size() == 1);
  CHECK(r.steps()[0].step == 2);
  CHECK(r.steps()[0].committed);
}

namespace {
/// Gives every halo cell of u and v a value of its own (the toy model leaves them 0), so a
/// hand-off that dropped or shifted a halo cell shows.
void mark_halos(ToyModel& m) {
  const int p = m.block + 2 * m.halo;
  for (auto& g : m.grids)
    for (int v = 0; v < 2; ++v)
      for (int i = 0; i < p * p * p; ++i) {
        const int x = i % p, y = (i / p) % p, z = i / (p * p);
        const auto in = [&](int c) { return c >= m.halo && c < p - m.halo; };
        if (!(in(x) && in(y) && in(z)))
          g.f[static_cast<std::size_t>(v)][static_cast<std::size_t>(i)] = 1e6 * (v + 1) + static_cast<double>(g.uid % 997) + i;
      }
}

/// On the I/O rank: checks every step it is handed against a model of its own (all grids,
/// advanced as far, halos marked), array by array, halo cells included.
class CheckingConsumer final : public StepConsumer {
 public:
  std::vector<std::int64_t> steps;
  bool padded = true, same = true;
  std::int64_t decline_at = -1;
  std::size_t grids = 0;
  std::vector<std::string> files;  ///< the run file of each step handed over
  bool consume(const StepInfo& step, const LocalGrids& lg, MPI_Comm io, const std::string& file) override {
    files.push_back(file);
    int n = 0;
    MPI_Comm_size(io, &n);
    same = same && n == 1;  // the I/O ranks' communicator (one I/O rank here)
    for (; at_ < step.step; ++at_) ref_.advance(kDt);
    ToyModel marked = ref_;
    mark_halos(marked);
    steps.push_back(step.step);
    padded = padded && lg.halo == 1 && step.fields.size() == 2 && step.fields[1].name == "v";
    const auto cells = static_cast<std::size_t>(6 * 6 * 6);
    for (const auto& r : lg.grids) {
      ++grids;
      const auto want = std::find_if(marked.grids.begin(), marked.grids.end(), [&](const auto& g) { return g.uid == r.uid; });
      if (want == marked.grids.end()) {
        same = false;
        continue;
      }
      for (const auto& f : step.fields) {
        const auto s = static_cast<std::size_t>(f.slot);
        same = same && std::memcmp(r.fields.at(s), want->f[s].data(), cells * sizeof(double)) == 0;
      }
      same = same && r.cell_type && std::memcmp(r.cell_type, want->cell_type.data(), cells) == 0;
    }
    return step.step != decline_at;
  }

 private:
  ToyModel ref_ = ToyModel::build(MPI_COMM_SELF);
  std::int64_t at_ = 0;
};
}  // namespace

TEST_CASE("dedicated: steps for a consumer reach it with their halos, written or not; the file is the same",
          "[kernel][mpi]") {
  if (rwd::test::world_size() < 2) {  // no I/O rank at one process: refused, naming the cure
    CHECK_THAT(rwd::kernel::test::dedicated_alone_error("dedicated_alone"), Catch::Contains("needs I/O ranks"));
    return;
  }
  IoOptions base;
  base.write_views = false;
  DedicatedLayout lay;
  const std::vector<FieldSpec> consume{{"cell_data", "u", 0}, {"cell_data", "v", 1}};
  // The reference: steps 1, 2 and 4 written collectively by the same compute ranks.
  const std::string ref_path = rwd::kernel::test::test_path("consumer_ref");
  const std::string path = rwd::kernel::test::test_path("consumer");
  if (!lay.is_io) {
    ToyModel m = ToyModel::build(lay.compute);
    Writer w = Writer::create(lay.compute, ref_path, ToyModel::common(), base);
    for (int i = 1; i <= kSteps; ++i) {
      m.advance(kDt);
      mark_halos(m);
      if (i != 3) w.write_step(step_info(i), m.describe());
    }
    w.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (lay.is_io) {
    CheckingConsumer c;
    c.decline_at = 3;  // as a hook that failed at step 3 would
    const IoRankStats st = serve_io_ranks(lay.group, lay.io, &c);
    CHECK(st.steps == 3);
    CHECK(st.consumed == 2);
    CHECK(c.steps == std::vector<std::int64_t>{1, 3});  // step 4 came after it declined
    CHECK(c.grids == 2 * 33);
    for (const auto& f : c.files)  // the file the I/O ranks write, also for step 3 (not written)
      CHECK(std::filesystem::path(f).filename() == std::filesystem::path(path).filename());
    CHECK(c.padded);
    CHECK(c.same);
  } else {
    IoOptions opt = base;
    opt.strategy = Strategy::dedicated;
    ToyModel m = ToyModel::build(lay.compute);
    Writer w = Writer::create(lay.compute, path, ToyModel::common(), opt, WriterEnv{lay.group, {}});
    for (int i = 1; i <= kSteps; ++i) {
      m.advance(kDt);
      mark_halos(m);
      if (i == 2) w.write_step(step_info(i), m.describe());           // written only: interiors
      else w.hand_off(step_info(i), m.describe(), i != 3, consume);  // 3: for the consumer only
      CHECK(w.last_step() == (i == 3 ? 2 : i));
    }
    CHECK(w.consumer_declined());  // learnt when step 3 was settled
    w.close();
    release_io_ranks(lay.group);
    // Any other strategy refuses a step for a consumer.
    Writer c = Writer::create(lay.compute, rwd::kernel::test::test_path("consumer_collective"), ToyModel::common(), base);
    CHECK_THROWS_AS(c.hand_off(step_info(1), m.describe(), true, consume), FileError);
    CHECK_FALSE(c.consumer_declined());
    c.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(file_summary(path) == file_summary(ref_path));
  CHECK(restarts_exactly(path));  // step 4, written from the padded hand-off, bit for bit
}

TEST_CASE("dedicated: the I/O ranks' errors reach the compute ranks, named, and the file keeps its steps",
          "[kernel][mpi]") {
  if (rwd::test::world_size() < 2) {  // no I/O rank at one process: refused, naming the cure
    CHECK_THAT(rwd::kernel::test::dedicated_alone_error("dedicated_alone"), Catch::Contains("needs I/O ranks"));
    return;
  }
  DedicatedLayout lay;
  const std::string path = rwd::kernel::test::test_path("dedicated_errors");
  if (lay.is_io) {
    serve_io_ranks(lay.group, lay.io);
  } else {
    IoOptions opt;
    opt.write_views = false;
    opt.strategy = Strategy::dedicated;
    const WriterEnv env{lay.group, {}};
    // A file that cannot be created: every compute rank gets the I/O ranks' error.
    try {
      (void)Writer::create(lay.compute, "/nonexistent-dir/x.h5", ToyModel::common(), opt, env);
      FAIL("created a file in a directory that does not exist");
    } catch (const FileError& e) {
      CHECK(std::string(e.what()).find("/nonexistent-dir/x.h5") != std::string::npos);
    }
    // A step the I/O ranks refuse (its number does not increase): reported by the next call.
    ToyModel m = ToyModel::build(lay.compute);
    Writer w = Writer::create(lay.compute, path, ToyModel::common(), opt, env);
    w.write_step(step_info(2), m.describe());
    w.write_step(step_info(2), m.describe());  // handed off: the refusal comes later
    try {
      w.close();
      FAIL("close did not report the refused step");
    } catch (const FileError& e) {
      CHECK(std::string(e.what()).find("step 2 (written by the I/O ranks)") != std::string::npos);
    }
    release_io_ranks(lay.group);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Reader r = Reader::open(path);
  REQUIRE(r.steps().size() == 1);
  CHECK(r.steps()[0].committed);
}

TEST_CASE("strategy values are checked with one line", "[kernel]") {
  IoOptions o;
  CHECK_THROWS_WITH(set_option(o, "strategy", std::string("async")),
                    "I/O option 'strategy' must be \"auto\", \"collective\", \"independent\", \"aggregated\", \"dedicated\", not \"async\"");
  CHECK_THROWS_WITH(set_option(o, "steps_in_flight", std::int64_t{0}), "I/O option 'steps_in_flight' must be at least 1, not 0");
  set_option(o, "strategy", std::string("dedicated"));
  CHECK(option_string(o, "strategy") == "dedicated");
}

TEST_CASE("a restart read never returns silently corrupted cell data, whichever way it hashes", "[kernel][mpi]") {
  // Rows of 32 KiB (block 16): a rank's rows of a dataset span several 1 MiB chunks, which
  // a rank bound to one CPU (mpirun's binding at 1 and 2 ranks here) writes and hashes
  // inline; the reader checks each chunk it reads as it lands.
  constexpr int kBlock = 16;
  IoOptions opt;
  opt.write_views = false;
  const std::string path = rwd::kernel::test::test_path("strategy_corrupt");
  write_run(MPI_COMM_WORLD, path, opt, false, kBlock);
  // Four bytes in the middle of the last checkpoint's cell_data/u, flipped behind HDF5's back.
  char group_name[64];
  std::snprintf(group_name, sizeof group_name, "/simulation/step_%08d", kSteps);
  const std::string group = group_name;
  std::int64_t bad_row = -1;
  if (rwd::test::world_rank() == 0) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, (group + "/cell_data/u").c_str(), H5P_DEFAULT);
    const auto at = static_cast<long>(H5Dget_offset(d) + H5Dget_storage_size(d) / 2);
    bad_row = static_cast<std::int64_t>(H5Dget_storage_size(d) / 2) / (kBlock * kBlock * kBlock * 8);
    H5Dclose(d);
    H5Fclose(f);
    std::FILE* raw = std::fopen(path.c_str(), "r+b");
    REQUIRE(raw != nullptr);
    unsigned char b[4];
    std::fseek(raw, at, SEEK_SET);
    REQUIRE(std::fread(b, 1, 4, raw) == 4);
    for (auto& x : b) x ^= 0x5a;
    std::fseek(raw, at, SEEK_SET);
    REQUIRE(std::fwrite(b, 1, 4, raw) == 4);
    std::fclose(raw);
  }
  MPI_Bcast(&bad_row, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  Reader r = Reader::open(path, MPI_COMM_WORLD);
  const auto t = r.read_topology(kSteps);
  const auto rows = partition_rows(t, rwd::test::world_rank(), rwd::test::world_size());
  const bool mine = std::find(rows.begin(), rows.end(), bad_row) != rows.end();
  const std::string want = group + "/cell_data/u: grid row " + std::to_string(bad_row) + " does not match its checksum";
  // Read from the page cache (the file was just written), then evicted first: past the
  // cache (O_DIRECT) where the file system allows it.
  for (const int pass : {0, 1, 2, 3}) {
    const int halo = pass % 2;  // straight into the arrays; through the bounce buffers
    const bool evicted = pass >= 2;
    INFO("halo " << halo << ", evicted " << evicted);
    if (evicted && rwd::test::world_rank() == 0) {
      const int fd = ::open(path.c_str(), O_RDONLY);
      REQUIRE(fd >= 0);
      ::fsync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::size_t side = static_cast<std::size_t>(kBlock + 2 * halo);
    std::vector<std::vector<double>> arrays(rows.size(), std::vector<double>(side * side * side));
    std::vector<double*> dest;
    for (auto& a : arrays) dest.push_back(a.data());
    bool refused = false, named = false;
    try {
      r.read_fields_into(kSteps, {{"cell_data", "u"}}, rows, {dest}, halo);
    } catch (const FileError& e) {
      refused = e.kind() == ErrorKind::corrupt;
      named = std::string(e.what()).find(want) != std::string::npos;
    }
    const bool past_cache = rwd::kernel::last_read_breakdown().direct_bytes > 0;
    if (evicted && rwd::kernel::detail::DirectReads(path).usable()) CHECK(rwd::test::all_ranks(past_cache));
    if (!evicted) CHECK(rwd::test::all_ranks(!past_cache));  // from the cache
    CHECK(rwd::test::all_ranks(refused));  // every rank stops, none goes on with the data
    CHECK(rwd::test::all_ranks(!mine || named));  // the rank that read it names step, dataset and grid row
    // The other datasets of the step are intact and still read.
    CHECK_NOTHROW(r.read_fields_into(kSteps, {{"cell_data", "v"}}, rows, {dest}, halo));
  }
}
