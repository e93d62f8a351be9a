// Layout, offsets, empty ranks, all-empty steps, collective transfer, write statistics.
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "mpi_test_util.hpp"
#include "rewind/kernel/read_breakdown.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::ToyModel;

namespace {
std::vector<Reader> open_all(const std::vector<std::string>& paths) {
  std::vector<Reader> readers;
  for (const auto& p : paths) readers.push_back(Reader::open(p));
  return readers;
}
std::vector<std::int64_t> all_rows(const StepTopology& t) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(t.n_grids));
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}
}  // namespace

TEST_CASE("rows are ordered by (level, rank, key); links are rows; data lands in its row", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("layout");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  WriteStats st;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    StepInfo s = ToyModel::checkpoint_step(10, 0.1, 0.01);
    st = w.write_step(s, m.describe());
    w.close();
  }
  THEN("the write reports bytes, a linear buffer and a collective transfer") {
    CHECK(st.n_grids == 33);
    CHECK(st.all_collective);
    // interior only: 6 fields * 33 grids * 64 cells * 8 bytes + cell types + topology
    CHECK(st.bytes > 6 * 33 * 64 * 8);
    // pipelined: two halves, each one variable of this rank's grids; below one copy
    CHECK(st.in_place.buffer_bytes == static_cast<std::int64_t>(2 * m.grids.size() * 64 * 8));
    CHECK(st.in_place.buffer_bytes <= st.bytes_local);
    CHECK(st.bandwidth > 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Reader r = Reader::open(path);
  StepTopology t = r.read_topology(10);
  REQUIRE(t.n_grids == 33);
  THEN("root is row 0 and rows are (level, rank, key) ordered") {
    CHECK(t.level[0] == 0);
    CHECK(t.parent_row[0] == -1);
    for (std::int64_t i = 1; i < t.n_grids; ++i) {
      auto a = std::make_tuple(t.level[i - 1], t.rank[i - 1], t.sort_key[i - 1]);
      auto b = std::make_tuple(t.level[i], t.rank[i], t.sort_key[i]);
      CHECK(a < b);
    }
    CHECK(t.level_offsets == std::vector<std::int64_t>{0, 1, 9, 25, 33});
  }
  THEN("the step records its tree: leaf grids per level, summed over every rank's grids") {
    // root and two refined level-1 grids (one refined again) have children
    const auto steps = r.steps();
    REQUIRE(steps.size() == 1);
    std::vector<std::int64_t> leaves(4, 0);
    for (std::int64_t i = 0; i < t.n_grids; ++i) {
      bool leaf = true;
      for (int j = 0; j < 8; ++j) leaf = leaf && t.child_rows[i * 8 + j] < 0;
      if (leaf) ++leaves[static_cast<std::size_t>(t.level[i])];
    }
    CHECK(steps[0].leaf_grids_per_level == leaves);
    CHECK(steps[0].leaf_grids_per_level == std::vector<std::int64_t>{0, 6, 15, 8});
  }
  THEN("parent_row and child_rows agree with the uids") {
    for (std::int64_t i = 0; i < t.n_grids; ++i) {
      if (t.parent_row[i] >= 0) CHECK(t.uid[t.parent_row[i]] == t.parent_uid[i]);
      for (int j = 0; j < 8; ++j) {
        auto cr = t.child_rows[i * 8 + j];
        CHECK((cr < 0) == (t.child_uids[i * 8 + j] == kNoUid));
        if (cr >= 0) CHECK(t.parent_row[cr] == i);
      }
    }
  }
  THEN("every rank's cells are in the right rows, in every dataset") {
    std::map<std::uint64_t, std::int64_t> row;
    for (std::int64_t i = 0; i < t.n_grids; ++i) row[t.uid[i]] = i;
    std::vector<std::int64_t> mine;
    for (const auto& g : m.grids) mine.push_back(row.at(g.uid));
    for (int slot : {0, 3, 5}) {
      auto f = ToyModel::checkpoint_fields()[static_cast<std::size_t>(slot)];
      std::vector<double> buf(mine.size() * 64);
      r.read_rows(10, f.group, f.name, mine, buf.data());  // serial reader, unsorted rows OK
      auto want = m.interior(slot);
      for (std::size_t i = 0; i < m.grids.size(); ++i)
        CHECK(std::vector<double>(buf.begin() + i * 64, buf.begin() + (i + 1) * 64) == want.at(m.grids[i].uid));
    }
  }
  THEN("/common round-trips") {
    auto c = r.common();
    CHECK(c.block == BlockShape{4, 4, 4});
    CHECK(c.variables.size() == 2);
    CHECK(c.variables[1].unit == "m/s");
    CHECK(c.case_text == ToyModel::common().case_text);
    CHECK(c.fluid.at("nu") == 1e-3);
    CHECK(!c.lineage.is_branch());
    CHECK(r.format_version() == std::make_pair(kFormatMajor, kFormatMinor));
  }
}

TEST_CASE("the write pipeline changes no byte and keeps the buffer within one copy", "[kernel][mpi]") {
  // Same step written three ways: pipelined with early writeback (default), pipelined
  // without a kept buffer, and strictly serial. The files' data must be identical.
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  struct Way {
    const char* name;
    bool pipeline, writeback, keep;
  };
  const Way ways[] = {{"pipelined", true, true, true}, {"nokeep", true, true, false}, {"serial", false, false, false}};
  std::vector<std::string> paths;
  std::vector<WriteStats> stats;
  for (const auto& way : ways) {
    IoOptions opt;
    opt.write_views = false;
    opt.pipeline = way.pipeline;
    opt.early_writeback = way.writeback;
    opt.keep_buffer = way.keep;
    paths.push_back(rwd::kernel::test::test_path(std::string("pipeline_") + way.name));
    Writer w = Writer::create(MPI_COMM_WORLD, paths.back(), ToyModel::common(), opt);
    for (std::int64_t step : {1, 2}) {  // the second step reuses the kept buffer
      StepInfo s = ToyModel::checkpoint_step(step, 0.1 * step, 0.1);
      stats.push_back(w.write_step(s, m.describe()));
    }
    // A one-variable step: two halves would exceed the rank's data, so no pipelining.
    StepInfo one{3, 0.3, 0.1, StepKind::visualisation, {{"cell_data", "u", 0}}, false, {}, {}};
    stats.push_back(w.write_step(one, m.describe()));
    w.close();
  }
  const auto nloc = static_cast<std::int64_t>(m.grids.size());
  THEN("a kept buffer is reused by the next step; without keep_buffer it is not") {
    for (std::size_t way = 0; way < 3; ++way) {
      const WriteStats& second = stats[way * 3 + 1];
      INFO("way " << ways[way].name);
      if (second.in_place.buffer_bytes > 0) CHECK(second.in_place.buffer_reused == ways[way].keep);
    }
  }
  THEN("with early writeback, the node leader starts it for every dataset; nobody else does") {
    const bool leader = rwd::test::world_rank() == 0;  // one node: world rank 0 leads it
    for (std::size_t i = 0; i < stats.size(); ++i) {
      INFO("way " << ways[i / 3].name << ", write " << i % 3);
      if (ways[i / 3].writeback && leader) CHECK(stats[i].in_place.writeback_datasets >= 10);  // 9 topology + data
      else CHECK(stats[i].in_place.writeback_datasets == 0);
    }
  }
  THEN("pipelined steps use two halves of one variable, serial ones one; never more than the data") {
    for (std::size_t i = 0; i < stats.size(); ++i) {
      const bool serial_way = i / 3 == 2, one_var = i % 3 == 2;
      CHECK(stats[i].in_place.buffer_bytes == (serial_way || one_var ? 1 : 2) * nloc * 64 * 8);
      CHECK(stats[i].in_place.buffer_bytes <= stats[i].bytes_local);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  THEN("every dataset reads back the same in all three files") {
    std::vector<Reader> readers = open_all(paths);
    for (std::int64_t step : {1, 2, 3}) {
      StepTopology t0 = readers[0].read_topology(step);
      const std::vector<std::int64_t> rows = all_rows(t0);
      std::vector<FieldSpec> fields = step == 3 ? std::vector<FieldSpec>{{"cell_data", "u", 0}} : ToyModel::checkpoint_fields();
      for (std::size_t k = 1; k < readers.size(); ++k) {
        StepTopology t = readers[k].read_topology(step);
        CHECK(t.uid == t0.uid);
        CHECK(t.child_rows == t0.child_rows);
        CHECK(t.bbox == t0.bbox);
        for (const auto& f : fields) {
          std::vector<double> a(rows.size() * 64), b(rows.size() * 64);
          readers[0].read_rows(step, f.group, f.name, rows, a.data());
          readers[k].read_rows(step, f.group, f.name, rows, b.data());
          CHECK(a == b);
        }
        if (step != 3) {
          std::vector<std::uint8_t> a(rows.size() * 64), b(rows.size() * 64);
          readers[0].read_cell_types(step, rows, a.data());
          readers[k].read_cell_types(step, rows, b.data());
          CHECK(a == b);
        }
      }
    }
  }
  THEN("and the data is this rank's, not a neighbour half's") {
    Reader r = Reader::open(paths[0]);
    StepTopology t = r.read_topology(2);
    std::map<std::uint64_t, std::int64_t> row;
    for (std::int64_t i = 0; i < t.n_grids; ++i) row[t.uid[static_cast<std::size_t>(i)]] = i;
    std::vector<std::int64_t> mine;
    for (const auto& g : m.grids) mine.push_back(row.at(g.uid));
    for (int slot = 0; slot < 6; ++slot) {
      auto f = ToyModel::checkpoint_fields()[static_cast<std::size_t>(slot)];
      std::vector<double> buf(mine.size() * 64);
      r.read_rows(2, f.group, f.name, mine, buf.data());
      auto want = m.interior(slot);
      for (std::size_t i = 0; i < m.grids.size(); ++i)
        CHECK(std::vector<double>(buf.begin() + i * 64, buf.begin() + (i + 1) * 64) == want.at(m.grids[i].uid));
    }
  }
  release_kept_write_buffer();
}

TEST_CASE("zero-copy writes put byte for byte what packing writes", "[kernel][mpi]") {
  // Grids without halo: every array is exactly its row, so the kernel writes the double
  // fields and cell types straight from them (collective or independent MPI-IO) instead
  // of packing. Written three ways, plus a step where only rank 0 has grids; the files
  // must hold the same bytes, and the rows must be this rank's data.
  // With halo 1 (the solver's layout) the same holds with zero_copy_halo (subarray types),
  // which needs collective transfers: the independent way packs then.
  const int rank = rwd::test::world_rank();
  const int halo = GENERATE(0, 1);
  INFO("halo " << halo);
  ToyModel m = ToyModel::build(MPI_COMM_WORLD, 4, halo);
  ToyModel full = ToyModel::build(MPI_COMM_SELF, 4, halo);
  ToyModel lopsided;  // rank 0 owns every grid, the others none
  lopsided.block = 4;
  lopsided.halo = halo;
  if (rank == 0) lopsided = full;
  struct Way {
    const char* name;
    bool zero_copy, collective;
  };
  const Way ways[] = {{"zc_collective", true, true}, {"zc_independent", true, false}, {"packed", false, true}};
  std::vector<std::string> paths;
  std::vector<std::vector<WriteStats>> stats;
  for (const auto& way : ways) {
    IoOptions opt;
    opt.write_views = false;
    opt.zero_copy = way.zero_copy;
    opt.zero_copy_halo = way.zero_copy && halo > 0;
    opt.collective_transfer = way.collective;
    paths.push_back(rwd::kernel::test::test_path(std::string("zero_copy_h") + std::to_string(halo) + "_" + way.name));
    Writer w = Writer::create(MPI_COMM_WORLD, paths.back(), ToyModel::common(), opt);
    stats.emplace_back();
    stats.back().push_back(w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe()));
    // float32 output needs a conversion: those datasets are packed
    stats.back().push_back(w.write_step(ToyModel::visual_step(2, 0.2, 0.1, true, false), m.describe()));
    stats.back().push_back(w.write_step(ToyModel::checkpoint_step(3, 0.3, 0.1), lopsided.describe()));
    w.close();
  }
  const auto nloc = static_cast<std::int64_t>(m.grids.size());
  THEN("zero-copy steps write 6 fields + cell types from the arrays and buffer no cell data") {
    for (std::size_t way = 0; way < 3; ++way) {
      INFO("way " << ways[way].name);
      const auto& st = stats[way];
      const bool direct = ways[way].zero_copy && (halo == 0 || ways[way].collective);
      CHECK(st[0].in_place.direct_datasets == (direct ? 7 : 0));
      CHECK(st[1].in_place.direct_datasets == 0);
      CHECK(st[2].in_place.direct_datasets == (direct ? 7 : 0));
      if (direct) CHECK(st[0].in_place.buffer_bytes < nloc * 64 * 8);  // less than one variable
      else CHECK(st[0].in_place.buffer_bytes == 2 * nloc * 64 * 8);
      CHECK(st[0].all_collective == ways[way].collective);
      CHECK(st[0].n_grids == 33);
      CHECK(st[2].n_grids == 33);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  THEN("every dataset of every step reads back the same from all three files, and as written") {
    std::vector<Reader> readers = open_all(paths);
    for (std::int64_t step : {1, 2, 3}) {
      StepTopology t0 = readers[0].read_topology(step);
      const std::vector<std::int64_t> rows = all_rows(t0);
      const auto fields = step == 2 ? ToyModel::visual_fields(true) : ToyModel::checkpoint_fields();
      std::vector<std::vector<double>> first;
      for (std::size_t k = 0; k < readers.size(); ++k) {
        INFO("step " << step << ", way " << ways[k].name);
        StepTopology t = readers[k].read_topology(step);
        CHECK(t.uid == t0.uid);
        CHECK(t.child_rows == t0.child_rows);
        for (std::size_t fi = 0; fi < fields.size(); ++fi) {
          std::vector<double> a(rows.size() * 64);
          readers[k].read_rows(step, fields[fi].group, fields[fi].name, rows, a.data());
          if (k == 0) first.push_back(a);
          else CHECK(rwd::kernel::test::bit_equal(a, first[fi]));
          if (step != 2) {  // double data: exactly the model's interior, row by row
            const auto want = full.interior(fields[fi].slot);
            for (std::size_t i = 0; i < rows.size(); ++i)
              CHECK(rwd::kernel::test::bit_equal(std::vector<double>(a.begin() + static_cast<std::ptrdiff_t>(i * 64),
                                                                     a.begin() + static_cast<std::ptrdiff_t>((i + 1) * 64)),
                                                  want.at(t.uid[i])));
          }
        }
        if (step != 2) {
          std::vector<std::uint8_t> ct(rows.size() * 64), ct0(rows.size() * 64);
          readers[k].read_cell_types(step, rows, ct.data());
          readers[0].read_cell_types(step, rows, ct0.data());
          CHECK(ct == ct0);
        }
      }
    }
  }
  release_kept_write_buffer();
}

TEST_CASE("ranks without grids take part; an all-empty step is written", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("empty");
  const int rank = rwd::test::world_rank(), size = rwd::test::world_size();
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  // Move all grids of the odd ranks to nobody: give them to rank 0 by rebuilding.
  ToyModel full = ToyModel::build(MPI_COMM_SELF);
  ToyModel half;
  half.block = 4;
  half.halo = 1;
  if (rank == 0) half = full;  // rank 0 owns everything, others are empty
  IoOptions opt;
  opt.write_views = false;
  Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
  WriteStats a = w.write_step(ToyModel::visual_step(1, 0.0, 0.1, true, false), half.describe());
  CHECK(a.n_grids == 33);
  if (size > 1) CHECK(a.all_collective);
  ToyModel none;
  none.block = 4;
  WriteStats b = w.write_step(ToyModel::visual_step(2, 0.1, 0.1, false, false), none.describe());
  CHECK(b.n_grids == 0);
  w.close();
  MPI_Barrier(MPI_COMM_WORLD);
  Reader r = Reader::open(path);
  auto steps = r.steps();
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].n_grids == 33);
  CHECK(steps[1].n_grids == 0);
  CHECK(steps[1].committed);
  CHECK(steps[1].leaf_grids_per_level.empty());  // no levels: an empty array, still written
  THEN("float32 visualisation data converts back") {
    auto t = r.read_topology(1);
    std::vector<double> buf(64);
    r.read_rows(1, "cell_data", "u", {0}, buf.data());
    auto want = full.interior(0).at(t.uid[0]);
    for (std::size_t i = 0; i < 64; ++i) CHECK(buf[i] == Approx(want[i]).epsilon(1e-6));
    auto f = r.fields(1);
    REQUIRE(f.size() == 2);
    CHECK(f[0].float32);
  }
  (void)m;
}

TEST_CASE("collective reads on any rank count return the written rows", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("collective_read");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    w.write_step(ToyModel::checkpoint_step(5, 0.5, 0.1), m.describe());
  }  // destructor closes
  Reader r = Reader::open(path, MPI_COMM_WORLD);
  ToyModel back = ToyModel::restart(r, 5, MPI_COMM_WORLD);
  // Compare against the full model (replicated) by uid.
  ToyModel full = ToyModel::build(MPI_COMM_SELF);
  auto want = full.interior(0);
  for (const auto& [uid, v] : back.interior(0)) CHECK(rwd::kernel::test::bit_equal(v, want.at(uid)));
  long long n = static_cast<long long>(back.grids.size()), total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == 33);
  THEN("read_fields returns what read_rows returns for each field, rows in any order") {
    auto t = r.read_topology(5);
    auto rows = partition_rows(t, rwd::test::world_rank(), rwd::test::world_size());
    for (bool shuffled : {false, true}) {
      if (shuffled) std::reverse(rows.begin(), rows.end());
      const auto fields = ToyModel::checkpoint_fields();
      std::vector<Reader::FieldRef> refs;
      std::vector<std::vector<double>> got(fields.size(), std::vector<double>(rows.size() * 64));
      std::vector<double*> outs;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        refs.push_back({fields[i].group, fields[i].name});
        outs.push_back(got[i].data());
      }
      r.read_fields(5, refs, rows, outs);
      for (std::size_t i = 0; i < fields.size(); ++i) {
        std::vector<double> one(rows.size() * 64);
        r.read_rows(5, fields[i].group, fields[i].name, rows, one.data());
        CHECK(rwd::kernel::test::bit_equal(got[i], one));
        const auto expect = full.interior(fields[i].slot);
        for (std::size_t j = 0; j < rows.size(); ++j)
          CHECK(rwd::kernel::test::bit_equal(std::vector<double>(got[i].begin() + static_cast<std::ptrdiff_t>(j * 64),
                                                                 got[i].begin() + static_cast<std::ptrdiff_t>((j + 1) * 64)),
                                              expect.at(t.uid[static_cast<std::size_t>(rows[j])])));
      }
    }
    THEN("a missing field fails on every rank, naming it") {
      std::vector<double> a(rows.size() * 64), b(rows.size() * 64);
      try {
        r.read_fields(5, {{"cell_data", "u"}, {"cell_data", "nope"}}, rows, {a.data(), b.data()});
        FAIL("no error");
      } catch (const FileError& e) {
        CHECK(std::string(e.what()).find("nope") != std::string::npos);
      }
      CHECK_THROWS_AS(r.read_fields(5, {{"cell_data", "u"}}, rows, {a.data(), b.data()}), FileError);
    }
  }
  THEN("read_fields_into fills the interiors of padded arrays and leaves their ghosts alone") {
    auto t = r.read_topology(5);
    auto rows = partition_rows(t, rwd::test::world_rank(), rwd::test::world_size());
    std::reverse(rows.begin(), rows.end());  // any order
    if (!rows.empty()) rows.push_back(rows.front());  // a row twice is fine too
    Reader serial = Reader::open(path);  // no MPI-IO handle: the buffered path
    for (const Reader* rd : {&r, &serial}) {
      for (int halo : {0, 2}) {
        INFO((rd == &r ? "collective" : "serial") << " reader, halo " << halo);
        const std::size_t side = static_cast<std::size_t>(4 + 2 * halo), padded = side * side * side;
        const auto fields = ToyModel::checkpoint_fields();
        std::vector<Reader::FieldRef> refs;
        std::vector<std::vector<std::vector<double>>> arrays(fields.size());
        std::vector<std::vector<double*>> dest(fields.size());
        for (std::size_t f = 0; f < fields.size(); ++f) {
          refs.push_back({fields[f].group, fields[f].name});
          arrays[f].assign(rows.size(), std::vector<double>(padded, -7.0));
          for (auto& a : arrays[f]) dest[f].push_back(a.data());
        }
        if (rd == &r) {
          rd->read_fields_into(5, refs, rows, dest, halo);
          // The bench's breakdown (read_breakdown.hpp) accounts for every byte this rank read.
          const auto bd = rwd::kernel::last_read_breakdown();
          CHECK(bd.bytes == static_cast<long long>(rows.size() * fields.size() * 64 * sizeof(double)));
          CHECK((bd.calls > 0) == !rows.empty());
          CHECK((bd.hash > 0) == !rows.empty());  // the toy file has checksums
          CHECK((bd.place > 0) == (halo > 0 && !rows.empty()));
        } else if (rwd::test::world_rank() == 0) {
          rd->read_fields_into(5, refs, rows, dest, halo);
        } else {
          continue;
        }
        for (std::size_t f = 0; f < fields.size(); ++f) {
          const auto expect = full.interior(fields[f].slot);
          for (std::size_t i = 0; i < rows.size(); ++i) {
            std::vector<double> inner;
            std::size_t ghosts_kept = 0, ghosts = 0;
            for (std::size_t z = 0; z < side; ++z)
              for (std::size_t y = 0; y < side; ++y)
                for (std::size_t x = 0; x < side; ++x) {
                  const double v = arrays[f][i][(z * side + y) * side + x];
                  const auto h = static_cast<std::size_t>(halo);
                  if (z >= h && z < h + 4 && y >= h && y < h + 4 && x >= h && x < h + 4) inner.push_back(v);
                  else {
                    ++ghosts;
                    if (v == -7.0) ++ghosts_kept;
                  }
                }
            CHECK(rwd::kernel::test::bit_equal(inner, expect.at(t.uid[static_cast<std::size_t>(rows[i])])));
            CHECK(ghosts_kept == ghosts);
          }
        }
      }
    }
  }
  THEN("a rank may read nothing while others read") {
    std::vector<std::int64_t> rows;
    if (rwd::test::world_rank() == 0) rows = {0, 32, 1};
    std::vector<double> buf(rows.size() * 64);
    r.read_rows(5, "cell_data", "v", rows, buf.data());  // collective: the empty ranks take part
    if (!rows.empty()) {
      auto t = r.read_topology(5);
      CHECK(rwd::kernel::test::bit_equal(std::vector<double>(buf.begin() + 64, buf.begin() + 128),
                                          full.interior(1).at(t.uid[32])));
    } else {
      CHECK(buf.empty());  // nothing asked, nothing written: and the call returned with the others
    }
  }
}

TEST_CASE("invalid input is rejected on every rank before any collective I/O", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("invalid");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
  auto lg = m.describe();
  if (rwd::test::world_rank() == 0 && !lg.grids.empty()) lg.grids[0].fields[0] = nullptr;  // one rank is wrong
  StepInfo s = ToyModel::checkpoint_step(1, 0.0, 0.1);
  bool threw = false;
  try {
    w.write_step(s, lg);
  } catch (const FileError& e) {
    threw = true;
    CHECK(e.kind() == ErrorKind::invalid_argument);
  }
  CHECK(threw);
  // The writer is still usable and the step number is still free.
  WriteStats ok = w.write_step(s, m.describe());
  CHECK(ok.n_grids == 33);
  // Steps must increase.
  CHECK_THROWS_AS(w.write_step(s, m.describe()), FileError);
  w.close();
}

TEST_CASE("a step the ranks describe differently is refused on every rank, nothing written", "[kernel][mpi]") {
  for (const Strategy strategy : {Strategy::collective, Strategy::aggregated}) {
    const std::string path = rwd::kernel::test::test_path(std::string("differ_") + to_string(strategy));
    ToyModel m = ToyModel::build(MPI_COMM_WORLD);
    IoOptions opt;
    opt.write_views = false;
    opt.strategy = strategy;
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    const int last = rwd::test::world_size() - 1;
    if (last > 0) {  // the last rank's time one ulp after the others'
      const double t = rwd::test::world_rank() == last ? std::nextafter(0.1, 1.0) : 0.1;
      try {
        (void)w.write_step(ToyModel::checkpoint_step(1, t, 0.1), m.describe());
        FAIL("a step with two times was written");
      } catch (const FileError& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        CHECK_THAT(e.what(), Catch::Contains("differently (time differ)"));
      }
    }
    // The writer goes on with the next good step.
    CHECK(w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), m.describe()).n_grids == 33);
    w.close();
    MPI_Barrier(MPI_COMM_WORLD);
    Reader r = Reader::open(path);
    REQUIRE(r.steps().size() == 1);
    CHECK(r.steps()[0].time == 0.1);
  }
}

TEST_CASE("grid_statistics gives each grid the statistics a written step stores, bit for bit", "[kernel][mpi]") {
  // The live state's adaptive windows rank grids by these (rewind::live): equal to the
  // file's, a paused run's window equals the file's at that step.
  const std::string path = rwd::kernel::test::test_path("grid_statistics");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  IoOptions opt;
  opt.write_views = false;
  const LocalGrids grids = m.describe();
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
    // u stored as double, v as float32.
    w.write_step(ToyModel::step_info(5, 0.05, 0.01, StepKind::visualisation,
                                     {{"cell_data", "u", 0, false}, {"cell_data", "v", 1, true}}, true),
                 grids);
    w.close();
  }
  std::vector<double> su, sv;  // the per-octant shares (format 1.10): the toy's 4^3 blocks have them
  const auto u = grid_statistics(MPI_COMM_WORLD, grids, 8, 0, false, &su);
  const auto v = grid_statistics(MPI_COMM_WORLD, grids, 8, 1, true, &sv);
  MPI_Barrier(MPI_COMM_WORLD);
  const Reader r = Reader::open(path);
  const StepTopology t = r.read_topology(5);
  REQUIRE(r.has_statistics(5, "u"));
  REQUIRE(r.has_shares(5, "u"));
  REQUIRE(r.has_shares(5, "v"));
  for (const auto& f : r.fields(5)) CHECK((f.group != kStatistics && f.group != kShares));  // no cells
  REQUIRE(u.size() == grids.grids.size());
  REQUIRE(v.size() == grids.grids.size());
  std::vector<std::int64_t> rows;
  for (const auto& g : grids.grids) rows.push_back(std::find(t.uid.begin(), t.uid.end(), g.uid) - t.uid.begin());
  const auto fu = r.read_statistics_rows(5, "u", rows), fv = r.read_statistics_rows(5, "v", rows);
  const auto bits = [](const std::array<double, 3>& a) {  // NaN ranges compare too
    std::array<std::uint64_t, 3> b{};
    for (std::size_t i = 0; i < 3; ++i) b[i] = std::bit_cast<std::uint64_t>(a[i]);
    return b;
  };
  int refined_with_detail = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    INFO("grid " << grids.grids[k].uid);
    CHECK(bits(u[k]) == bits(fu[k]));
    CHECK(bits(v[k]) == bits(fv[k]));  // float32 rounding as stored
    if (!grids.grids[k].child_uids.empty() && u[k][2] > 0) ++refined_with_detail;
  }
  // The shares, bit for bit, whether a child's parent is on its rank or another.
  REQUIRE(su.size() == 8 * grids.grids.size());
  REQUIRE(sv.size() == 8 * grids.grids.size());
  const auto su_file = r.read_shares_rows(5, "u", rows), sv_file = r.read_shares_rows(5, "v", rows);
  REQUIRE(su_file.size() == su.size());
  int with_shares = 0;
  for (std::size_t j = 0; j < su.size(); ++j) {
    INFO("grid " << grids.grids[j / 8].uid << " octant " << j % 8);
    CHECK(std::bit_cast<std::uint64_t>(su[j]) == std::bit_cast<std::uint64_t>(su_file[j]));
    CHECK(std::bit_cast<std::uint64_t>(sv[j]) == std::bit_cast<std::uint64_t>(sv_file[j]));
    if (grids.grids[j / 8].level == 0) CHECK(su[j] == 0.0);  // the root has no parent
    with_shares += su[j] > 0 ? 1 : 0;
  }
  // Not zeros: every child here differs from its parent in each octant.
  const auto children = static_cast<int>(
      std::count_if(grids.grids.begin(), grids.grids.end(), [](const GridRecord& g) { return g.level > 0; }));
  CHECK(with_shares == 8 * children);
  // Not a comparison of zeros: this rank's parents have details.
  const bool has_parent =
      std::any_of(grids.grids.begin(), grids.grids.end(), [](const GridRecord& g) { return !g.child_uids.empty(); });
  CHECK((refined_with_detail > 0) == has_parent);
  THEN("a block that does not halve gives no statistics; grids that are not one tree are refused on every rank") {
    LocalGrids odd = grids;
    odd.block = {3, 4, 4};  // the arrays stay valid: only the addressing changes
    std::vector<double> none{1.0};
    CHECK(grid_statistics(MPI_COMM_WORLD, odd, 8, 0, false, &none).empty());
    CHECK(none.empty());
    LocalGrids broken = grids;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && !broken.grids.empty()) broken.grids.front().parent_uid = 12345;  // no rank has it
    if (!broken.grids.empty() && rank == 0 && broken.grids.front().level == 0) broken.grids.front().level = 1;
    CHECK_THROWS_AS(grid_statistics(MPI_COMM_WORLD, broken, 8, 0), std::invalid_argument);
    CHECK_THROWS_AS(grid_statistics(MPI_COMM_WORLD, grids, 8, 9), std::invalid_argument);  // no slot 9
  }
}

TEST_CASE("every write path stores the same statistics: taken as rows are packed or hashed, or after",
          "[kernel][mpi]") {
  // The writer takes a grid's statistics while its field's rows are in the cache — as it
  // packs them (halo'd arrays), or hashes them for a zero-copy write — and the fields no
  // such visit read (zero copy without checksums) in a pass after the data. Each path must
  // store what grid_statistics computes from the grids, bit for bit, parents and children
  // on one rank or on two.
  struct Path {
    const char* name;
    int halo;
    bool checksums;
    bool zero_copy_halo;
  };
  for (const Path& p : {Path{"packed", 1, true, false}, Path{"zero_copy_hashed", 0, true, false},
                        Path{"zero_copy_unhashed", 0, false, false}, Path{"zero_copy_halo", 1, true, true},
                        Path{"packed_unhashed", 1, false, false}}) {
    INFO("write path " << p.name);
    const std::string path = rwd::kernel::test::test_path(std::string("statistics_path_") + p.name);
    ToyModel m = ToyModel::build(MPI_COMM_WORLD, 4, p.halo);
    IoOptions opt;
    opt.write_views = false;
    opt.checksums = p.checksums;
    opt.zero_copy_halo = p.zero_copy_halo;
    const LocalGrids grids = m.describe();
    {
      Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), opt);
      const WriteStats st =
          w.write_step(ToyModel::step_info(3, 0.03, 0.01, StepKind::visualisation,
                                           {{"cell_data", "u", 0, false}, {"cell_data", "v", 1, true}}, true),
                       grids);
      CHECK((st.in_place.direct_datasets > 0) == (p.halo == 0 || p.zero_copy_halo));  // the path named
      w.close();
    }
    std::vector<double> su, sv;
    const auto u = grid_statistics(MPI_COMM_WORLD, grids, 8, 0, false, &su);
    const auto v = grid_statistics(MPI_COMM_WORLD, grids, 8, 1, true, &sv);
    MPI_Barrier(MPI_COMM_WORLD);
    const Reader r = Reader::open(path);
    const StepTopology t = r.read_topology(3);
    std::vector<std::int64_t> rows;
    for (const auto& g : grids.grids) rows.push_back(std::find(t.uid.begin(), t.uid.end(), g.uid) - t.uid.begin());
    const auto fu = r.read_statistics_rows(3, "u", rows), fv = r.read_statistics_rows(3, "v", rows);
    const auto su_file = r.read_shares_rows(3, "u", rows), sv_file = r.read_shares_rows(3, "v", rows);
    REQUIRE(fu.size() == u.size());
    REQUIRE(su_file.size() == su.size());
    int differ = 0, details = 0;
    for (std::size_t k = 0; k < rows.size(); ++k)
      for (std::size_t c = 0; c < 3; ++c) {
        differ += std::bit_cast<std::uint64_t>(u[k][c]) != std::bit_cast<std::uint64_t>(fu[k][c]);
        differ += std::bit_cast<std::uint64_t>(v[k][c]) != std::bit_cast<std::uint64_t>(fv[k][c]);
        details += c == 2 && u[k][2] > 0;
      }
    for (std::size_t j = 0; j < su.size(); ++j) {
      differ += std::bit_cast<std::uint64_t>(su[j]) != std::bit_cast<std::uint64_t>(su_file[j]);
      differ += std::bit_cast<std::uint64_t>(sv[j]) != std::bit_cast<std::uint64_t>(sv_file[j]);
    }
    CHECK(differ == 0);
    const bool has_parent =
        std::any_of(grids.grids.begin(), grids.grids.end(), [](const GridRecord& g) { return !g.child_uids.empty(); });
    CHECK((details > 0) == has_parent);  // not a comparison of zeros
  }
}

TEST_CASE("6-cell blocks store statistics but no shares; no field is named into either group", "[kernel][mpi]") {
  // A child's half along an axis of 6 cells is 3 cells: 1.5 parent cells, no whole octant.
  const std::string path = rwd::kernel::test::test_path("no_shares");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD, 6);
  IoOptions opt;
  opt.write_views = false;
  const LocalGrids grids = m.describe();
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(6), opt);
    w.write_step(ToyModel::checkpoint_step(1, 0.1, 0.1), grids);
    for (const char* group : {kStatistics, kShares}) {
      StepInfo bad = ToyModel::checkpoint_step(2, 0.2, 0.1);
      bad.fields.push_back({group, "w", 0});
      try {
        (void)w.write_step(bad, grids);
        FAIL("a field was written into " << group);
      } catch (const FileError& e) {
        CHECK(e.kind() == ErrorKind::invalid_argument);
        CHECK_THAT(e.what(), Catch::Contains(std::string("field group '") + group + "' is reserved"));
      }
    }
    w.close();
  }
  std::vector<double> shares{1.0};
  CHECK(grid_statistics(MPI_COMM_WORLD, grids, 8, 0, false, &shares).size() == grids.grids.size());
  CHECK(shares.empty());
  MPI_Barrier(MPI_COMM_WORLD);
  const Reader r = Reader::open(path);
  CHECK(r.has_statistics(1, "u"));
  CHECK_FALSE(r.has_shares(1, "u"));
}

TEST_CASE("grid_range is a grid's min and max over its non-solid cells, none without one", "[kernel]") {
  // The live state's colour ranges (rewind::live): checked against a plain loop over the
  // halo'd arrays here, and against the file's statistics by the live window tests.
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  const LocalGrids grids = m.describe();
  const auto& b = grids.block;
  const int h = grids.halo, px = b.sx + 2 * h, py = b.sy + 2 * h;
  int solid_seen = 0;
  for (std::size_t k = 0; k < grids.grids.size(); ++k) {
    const auto& g = grids.grids[k];
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int z = 0; z < b.sz; ++z)
      for (int y = 0; y < b.sy; ++y)
        for (int x = 0; x < b.sx; ++x) {
          const auto i = static_cast<std::size_t>(((z + h) * py + (y + h)) * px + (x + h));
          if (g.cell_type[i] == 1) {
            ++solid_seen;
            continue;
          }
          lo = std::min(lo, g.fields[0][i]);
          hi = std::max(hi, g.fields[0][i]);
        }
    INFO("grid " << g.uid);
    CHECK(grid_range(grids, k, 0) == std::array<double, 2>{lo, hi});
  }
  CHECK(solid_seen > 0);  // the solid cells were left out, not absent
  if (!grids.grids.empty()) {
    LocalGrids all_solid = grids;
    const std::vector<std::uint8_t> solid(static_cast<std::size_t>(px * py * (b.sz + 2 * h)), 1);
    all_solid.grids.front().cell_type = solid.data();
    const auto r = grid_range(all_solid, 0, 0);
    CHECK((std::isnan(r[0]) && std::isnan(r[1])));
    CHECK_THROWS_AS(grid_range(grids, 0, 9), std::invalid_argument);  // no slot 9
  }
}
