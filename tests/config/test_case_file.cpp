#include <catch2/catch.hpp>

#include "rewind/config/case_file.hpp"

using namespace rwd::config;
using namespace rwd::spacetree;

namespace {
const char* kGood = R"(
[domain]
lo = [0.0, 0.0, 0.0]
hi = [2.0, 1.0, 0.1]
periodic = [true, false, false]

[tree]
r = [2, 2, 1]
s = [8, 8, 1]
depth = 2
max_depth = 4

[[tree.refine]]
center = [0.5, 0.5, 0.05]
radius = 0.1
level = 4

[run]
ranks = 3
)";
}

SCENARIO("A case file builds the tree it describes", "[spacetree][case]") {
  GIVEN("a 2-D case with a refined sphere") {
    auto doc = CaseDocument::parse(kGood, "good.toml");
    const TreeCase c = parse_tree_case(doc);
    doc.reject_unknown();
    THEN("the shape is read") {
      CHECK(c.shape.dim() == 2);
      CHECK(c.shape.s == std::array<int, 3>{8, 8, 1});
      CHECK(c.shape.periodic[0]);
      CHECK(c.ranks == 3);
      CHECK(c.regions.size() == 1);
    }
    WHEN("the tree is built") {
      const Tree t = build_tree(c);
      THEN("it reaches level 4 near the sphere only and is balanced") {
        CHECK(t.levels() == 5);
        CHECK(t.is_balanced());
        for (const auto& n : t.nodes())
          if (n.uid.level() == 4) CHECK(c.regions[0].overlaps(t.shape().bounding_box(t.nodes()[static_cast<std::size_t>(n.parent)].uid)));
      }
    }
  }
  GIVEN("overrides on the command line") {
    auto doc = CaseDocument::parse(kGood, "good.toml", {"tree.depth=3", "run.ranks=5"});
    const TreeCase c = parse_tree_case(doc);
    THEN("they win over the file and show in the effective text") {
      CHECK(c.base_depth == 3);
      CHECK(c.ranks == 5);
      CHECK(doc.effective_text().find("depth = 3") != std::string::npos);
    }
  }
}

SCENARIO("Overrides index arrays: [[tables]] and plain arrays", "[spacetree][case]") {
  auto doc = CaseDocument::parse(kGood, "good.toml", {"tree.refine[0].level=3", "tree.s[1]=16"});
  const TreeCase c = parse_tree_case(doc);
  doc.reject_unknown();
  CHECK(c.regions.at(0).level == 3);
  CHECK(c.shape.s == std::array<int, 3>{8, 16, 1});
}

SCENARIO("Bad case files give one line naming the key", "[spacetree][case]") {
  const auto expect_error = [](const std::string& text, const std::string& needle,
                               std::vector<std::string> overrides = {}) {
    try {
      auto doc = CaseDocument::parse(text, "bad.toml", overrides);
      (void)parse_tree_case(doc);
      doc.reject_unknown();
      FAIL("no error for: " << needle);
    } catch (const CaseError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find(needle) != std::string::npos);
      CHECK(msg.find("bad.toml") == 0);
      CHECK(msg.find('\n') == std::string::npos);
    }
  };
  const std::string good = kGood;
  expect_error(good + "\n[tree2]\nx = 1\n", "unknown key 'tree2.x'");
  expect_error(good, "unknown key 'tree.colour'", {"tree.colour=3"});
  expect_error("[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth=1\nr=[2,2]\n", "tree.r");
  expect_error("[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth='two'\n", "tree.depth: expected an integer");
  expect_error("[domain]\nlo=[0,0,0]\n[tree]\ndepth=1\n", "domain.hi: missing");
  expect_error("[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth=5\nmax_depth=3\n", "tree.depth");
  expect_error("[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth=1\nr=[3,3,3]\n", "tree.r");
  expect_error("[domain]\nlo=[0,0,0]\nhi=[1,1,1]\n[tree]\ndepth=1\n[run]\nranks=0\n", "run.ranks");
  expect_error("[domain\nlo=", "TOML syntax error");
  expect_error(good, "--set 'nokey'", {"nokey"});
  expect_error(good, "'refine' has 1 entries", {"tree.refine[3].level=2"});
  expect_error(good, "'depth' is not an array", {"tree.depth[0]=2"});
  expect_error(good, "bad index", {"tree.refine[x].level=2"});
  expect_error(good + "\n[\"tree.refine[0]\"]\nlevel = 2\n", "unknown key 'tree.refine[0]'");
}

TEST_CASE("A missing case file is one clear error", "[spacetree][case]") {
  CHECK_THROWS_WITH(CaseDocument::load("/nonexistent/case.toml"), Catch::Contains("cannot open case file"));
}
