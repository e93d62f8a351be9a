// Branch files and lineage: the parent is never modified; lineage follows parents back;
// one continuous timeline across files.
#include <catch2/catch.hpp>
#include <mpi.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "mpi_test_util.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::slurp;
using rwd::kernel::test::ToyModel;

TEST_CASE("a branch records its parent, leaves it untouched, and lineage follows it back", "[kernel][mpi]") {
  const std::string parent = rwd::kernel::test::test_path("branch_parent");
  const std::string child = rwd::kernel::test::test_path("branch_child");
  const std::string grandchild = rwd::kernel::test::test_path("branch_grandchild");
  IoOptions opt;
  opt.write_views = false;
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  {
    Writer w = Writer::create(MPI_COMM_WORLD, parent, ToyModel::common(), opt);
    for (int i = 1; i <= 4; ++i) {
      m.advance(0.01);
      w.write_step(ToyModel::checkpoint_step(i, i * 0.01, 0.01), m.describe());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string before = slurp(parent);
  struct stat st0 {};
  ::stat(parent.c_str(), &st0);
  {
    Reader pr = Reader::open(parent, MPI_COMM_WORLD);
    CommonInfo bc = make_branch_common(pr, 2, {"fluid.nu=0.002"});
    bc.fluid["nu"] = 0.002;
    ToyModel b = ToyModel::restart(pr, 2, MPI_COMM_WORLD);
    Writer w = Writer::create(MPI_COMM_WORLD, child, bc, opt);
    for (int i = 3; i <= 5; ++i) {
      b.advance(0.02);
      w.write_step(ToyModel::checkpoint_step(i, 0.02 + (i - 2) * 0.02, 0.02), b.describe());
    }
  }
  {
    Reader cr = Reader::open(child, MPI_COMM_WORLD);
    CommonInfo gc = make_branch_common(cr, 4, {"time_stepping.dt=0.005"});
    ToyModel b = ToyModel::restart(cr, 4, MPI_COMM_WORLD);
    Writer w = Writer::create(MPI_COMM_WORLD, grandchild, gc, opt);
    w.write_step(ToyModel::checkpoint_step(5, 0.065, 0.005), b.describe());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Checks run serially on rank 0 only (no sections: every rank must run the collectives
  // once); the others check what each of them sees of the chain.
  if (rwd::test::world_rank() != 0) {
    CHECK(Reader::open(grandchild).common().lineage.parent_step == 4);
    CHECK(Reader::open(child).common().lineage.is_branch());
    return;
  }

  {  // the parent file is byte-for-byte unchanged
    CHECK(slurp(parent) == before);
    struct stat st1 {};
    ::stat(parent.c_str(), &st1);
    CHECK(st1.st_mtime == st0.st_mtime);
  }
  {  // the branch's /common records parent file, step and changes
    Reader r = Reader::open(child);
    const auto& l = r.common().lineage;
    CHECK(l.is_branch());
    CHECK(l.parent_step == 2);
    CHECK(l.parent_time == 0.02);
    CHECK(l.changes == std::vector<std::string>{"fluid.nu=0.002"});
    CHECK(r.common().fluid.at("nu") == 0.002);
  }
  {  // lineage_chain follows the parents back to the original run
    auto chain = lineage_chain(grandchild);
    REQUIRE(chain.size() == 3);
    CHECK(chain[0].lineage.parent_step == 4);
    CHECK(chain[1].lineage.parent_step == 2);
    CHECK(!chain[2].lineage.is_branch());
    for (const auto& n : chain) CHECK(n.error.empty());
  }
  {  // timeline gives one continuous history across files
    auto tl = timeline(grandchild);
    std::vector<std::int64_t> steps;
    for (const auto& e : tl) steps.push_back(e.step.step);
    CHECK(steps == std::vector<std::int64_t>{1, 2, 3, 4, 5});
    CHECK(tl[1].path.find("branch_parent") != std::string::npos);
    CHECK(tl[2].path.find("branch_child") != std::string::npos);
    CHECK(tl[4].path.find("branch_grandchild") != std::string::npos);
  }
  {  // the branch tree lists every branch and marks the file asked about
    std::string tree = format_branch_tree(child);
    CHECK(tree.find("branch_parent") != std::string::npos);
    CHECK(tree.find("branch_grandchild") != std::string::npos);
    CHECK(tree.find("fluid.nu=0.002") != std::string::npos);
    auto marked = tree.find("  *");
    REQUIRE(marked != std::string::npos);
    CHECK(tree.rfind("branch_child", marked) != std::string::npos);
  }
  {  // a missing parent is reported, not fatal
    const std::string orphan = "kernel_test_orphan.h5";
    {
      CommonInfo c = ToyModel::common();
      c.lineage.parent_file = "/nonexistent/dir/run.h5";
      c.lineage.parent_step = 7;
      Writer w = Writer::create(MPI_COMM_SELF, orphan, c, opt);
    }
    auto chain = lineage_chain(orphan);
    REQUIRE(chain.size() == 2);
    CHECK(chain[0].error.empty());
    CHECK(chain[1].error.find("no such file") != std::string::npos);
    CHECK_THROWS_AS(timeline(orphan), FileError);
  }
}

TEST_CASE("a time picks the last step at or before it, on a file or a branch's timeline", "[kernel]") {
  // index_at_or_before is find_step("t=T")'s rule; the ParaView reader uses it on
  // timeline() times, so both pick the same step.
  const std::vector<double> times{0.0, 0.1, 0.2, 0.30000000000000004};
  CHECK(index_at_or_before(times, -1.0) == -1);
  CHECK(index_at_or_before(times, 0.0) == 0);
  CHECK(index_at_or_before(times, 0.05) == 0);
  CHECK(index_at_or_before(times, 0.1) == 1);
  CHECK(index_at_or_before(times, 0.3) == 3);  // a time printed and parsed back finds its step
  CHECK(index_at_or_before(times, 7.0) == 3);
  CHECK(index_at_or_before({}, 1.0) == -1);
}

TEST_CASE("a selector names a step on a branch's timeline: positions and times through the parent", "[kernel]") {
  // base.h5 steps 0, 3, 6 (t = step / 10) up to the branch point; br.h5 rewrites 6, then 9.
  const auto entry = [](const char* path, std::int64_t step) {
    StepEntry e;
    e.step = step;
    e.time = 0.1 * static_cast<double>(step);
    e.committed = true;
    return TimelineEntry{path, e};
  };
  const std::vector<TimelineEntry> line{entry("base.h5", 0), entry("base.h5", 3), entry("base.h5", 6),
                                        entry("br.h5", 6), entry("br.h5", 9)};
  const auto at = [&](const char* sel) {
    const auto e = select_on_timeline(line, sel, "br.h5");
    return e.path + ":" + std::to_string(e.step.step);
  };
  CHECK(at("#1") == "base.h5:3");      // a position on the timeline, not in br.h5
  CHECK(at("t=0.45") == "base.h5:3");  // before the branch point: the parent's step
  CHECK(at("6") == "br.h5:6");         // both hold it: the branch's
  CHECK(at("t=0.6") == "br.h5:6");
  CHECK(at("latest") == "br.h5:9");
  CHECK(at("#-1") == "br.h5:9");
  CHECK_THROWS_AS(select_on_timeline(line, "t=5", "br.h5"), FileError);
  CHECK_THROWS_AS(select_on_timeline(line, "7", "br.h5"), FileError);
}
