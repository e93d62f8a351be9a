// The case-key table is what the getters use: a key without a row cannot be read, a
// default declared twice is refused, defaults and ranges come from the row, and a
// misspelt key is matched against the table's rows, not only against keys read so far.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "rewind/config/case_file.hpp"

using namespace rwd::config;
using namespace rwd::spacetree;

namespace {
const char* kTree = "[domain]\nlo = [0, 0, 0]\nhi = [1, 1, 1]\n[tree]\ndepth = 1\n";
}

TEST_CASE("A key without a row in the table cannot be read", "[spacetree][case]") {
  auto doc = CaseDocument::parse(kTree, "t.toml");
  CHECK_THROWS_AS(doc.get_double("physics.viscosity", 1.0), std::logic_error);
  CHECK_THROWS_WITH(doc.get_int("tree.colour"), Catch::Contains("no row in the key table"));
  // ... nor as another type than its row's, nor with a second default.
  CHECK_THROWS_AS(doc.get_double("tree.depth"), std::logic_error);
  CHECK_THROWS_WITH(doc.get_bool("tree.balance", false), Catch::Contains("the default is the key table's"));
}

TEST_CASE("Defaults and ranges come from the table", "[spacetree][case]") {
  auto doc = CaseDocument::parse(kTree, "t.toml", {"run.ranks=0"});
  const auto& row = case_key("tree.s");
  CHECK(row.default_toml == "[16, 16, 16]");
  CHECK(doc.get_int3("tree.s") == std::array<int, 3>{16, 16, 16});
  CHECK(doc.get_bool("tree.balance") == true);
  CHECK_THROWS_WITH(doc.get_int("run.ranks"), "t.toml: run.ranks: must be at least 1, got 0");
  CHECK_THROWS_WITH(doc.get_int("tree.max_depth"), Catch::Contains("missing"));  // derived: the reader's fallback
  CHECK(doc.get_int("tree.max_depth", 3) == 3);
}

TEST_CASE("Every row is well-formed", "[spacetree][case]") {
  std::set<std::string> names;
  for (const auto& row : case_keys()) {
    INFO(row.name);
    CHECK(names.insert(row.name).second);
    CHECK(find_case_key(row.name) == &row);
    CHECK_FALSE(row.description.empty());
    // A default, a note on how the code derives it, or required: exactly one.
    CHECK((row.required ? 1 : 0) + (row.default_toml.empty() ? 0 : 1) + (row.default_note.empty() ? 0 : 1) == 1);
    if (row.steerable) CHECK((std::isfinite(row.range.min) && std::isfinite(row.range.max)));
    if (row.default_toml.empty() || row.type == KeyType::option) continue;
    // The default reads back through the getter of the row's type and lies in range.
    auto doc = CaseDocument::parse("", "defaults.toml");
    switch (row.type) {
      case KeyType::number: CHECK_NOTHROW(doc.get_double(row.name)); break;
      case KeyType::integer: CHECK_NOTHROW(doc.get_int(row.name)); break;
      case KeyType::boolean: CHECK_NOTHROW(doc.get_bool(row.name)); break;
      case KeyType::string: CHECK_NOTHROW(doc.get_string(row.name)); break;
      case KeyType::number3: CHECK_NOTHROW(doc.get_double3(row.name)); break;
      case KeyType::integer3: CHECK_NOTHROW(doc.get_int3(row.name)); break;
      case KeyType::boolean3: CHECK_NOTHROW(doc.get_bool3(row.name)); break;
      default: break;
    }
  }
}

TEST_CASE("Patterns: faces, arrays of tables, I/O options", "[spacetree][case]") {
  CHECK(find_case_key("boundary.zmax.velocity")->name == "boundary.<face>.velocity");
  CHECK(find_case_key("boundary.top.velocity") == nullptr);
  CHECK(find_case_key("obstacle[12].radius")->name == "obstacle[].radius");
  CHECK(find_case_key("output.io.cb_nodes")->name == "output.io.<option>");
  CHECK(is_case_section("tree.refine"));
  CHECK(is_case_section("boundary.xmin"));
  CHECK_FALSE(is_case_section("physics.nu"));
}

TEST_CASE("A whole table or array on a restart takes its strictest key's policy", "[spacetree][case]") {
  // `--set 'tree.refine=[...]'` and `--set 'tree={...}'` name no row: they once counted as a
  // plain change, and a restart wrote a branch whose case named a tree it did not have.
  CHECK(on_restart_of("tree.refine") == OnRestart::refines);
  CHECK(on_restart_of("tree.refine[1]") == OnRestart::refines);
  CHECK(on_restart_of("tree") == OnRestart::fixed);
  CHECK(on_restart_of("domain") == OnRestart::fixed);
  CHECK(on_restart_of("physics") == OnRestart::branches);
  CHECK(on_restart_of("time") == OnRestart::branches);  // time.dt branches, time.end extends
  CHECK(on_restart_of("time.end") == OnRestart::extends);
  CHECK(on_restart_of("tree.depth") == OnRestart::refines);
  CHECK(on_restart_of("no.such.key") == OnRestart::branches);
}

TEST_CASE("A misspelt key is matched against the table", "[spacetree][case]") {
  // physics.alpha is never read by this document: the hint must come from the table.
  auto doc = CaseDocument::parse(std::string(kTree) + "[physics]\nnu = 0.1\nalpah = 0.1\n", "t.toml");
  (void)doc.get_double("physics.nu");
  doc.mark_read("domain");
  doc.mark_read("tree");
  CHECK_THROWS_WITH(doc.reject_unknown(), Catch::Contains("unknown key 'physics.alpah'") &&
                                              Catch::Contains("did you mean 'physics.alpha'?"));
}
