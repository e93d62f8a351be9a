// The hand-off to the rank that writes (kernel/src/write/forward/forward.hpp, strategies aggregated and
// dedicated; its wire handoff_wire.hpp, its slots' layout slot_layout.hpp, both pure): what a compute rank sends
// arrives whole — the run's constants, the I/O options (an error bound to the last bit), the step with a NaN in its
// monitor state, a FileError, the grids' interiors with or without halos, and for a consumer the padded arrays whole,
// halo cells included — and a message cut short anywhere is refused with a FileError instead of being read past its
// end.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "write/forward/handoff_wire.hpp"
#include "write/forward/slot_layout.hpp"
#include "rewind/kernel/options.hpp"

using namespace rwd::kernel;
using namespace rwd::kernel::detail;

namespace {
CommonInfo sample_common() {
  CommonInfo c;
  c.dim = 2;
  c.block = {8, 4, 1};
  c.domain = {0, 2, 0, 1, 0, 0.25};
  c.time_stepping = {{"dt", 1e-3}, {"t_end", 2.5}};
  c.fluid = {{"nu", 1e-3}};
  c.variables = {{"u", "m/s"}, {"p", "Pa"}};
  c.case_text = "[case]\nname = \"wire\"\n";
  c.lineage.parent_file = "../parent.h5";
  c.lineage.parent_step = 40;
  c.lineage.parent_time = 0.125;
  c.lineage.changes = {"boundary.inflow=2.0"};
  return c;
}
/// Packs `lg` into `slot` (sized for `layout`) as compute rank 3 does; unpacks it as the
/// server does.
LocalGrids round_trip(const SlotLayout& layout, const LocalGrids& lg, std::vector<std::byte>& slot) {
  slot.assign(static_cast<std::size_t>(slot_bytes(layout, lg)), std::byte{0});
  Packer msg;
  pack_step(layout, lg, 3, slot.data(), msg);
  Unpacker u(msg.bytes());
  LocalGrids out;
  unpack_grids(u, slot.data(), out);
  return out;
}
StepInfo sample_step() {
  StepInfo s{42, 0.375, 1e-3, StepKind::checkpoint, {{"cell_data", "u", 0}, {"cell_data", "p", 2, true}}, true,
             {"physics.nu=0.002"}, {1.5, std::numeric_limits<double>::quiet_NaN()}, {{"drag", 0.1 + 0.2}, {"energy", -2.5}}};
  return s;
}
}  // namespace

TEST_CASE("the run's constants, options, step and errors cross the wire unchanged", "[kernel]") {
  IoOptions o;
  set_option(o, "strategy", std::string("dedicated"));
  set_option(o, "steps_in_flight", std::int64_t{3});
  set_option(o, "visualisation_compression", std::string("zfp"));
  set_option(o, "zfp_accuracy", 0.1 + 0.2);  // not a short decimal: every bit must survive
  set_option(o, "cb_nodes", std::int64_t{0});
  Packer p;
  p.put(sample_common());
  p.put(o);
  p.put(sample_step());
  p.put(FileError(ErrorKind::no_such_step, "a.h5", "step 7 is not committed", "detail"));
  Unpacker u(p.bytes());
  const CommonInfo c = u.common();
  CHECK(c.block == BlockShape{8, 4, 1});
  CHECK(c.domain[5] == 0.25);
  CHECK(c.time_stepping.at("t_end") == 2.5);
  CHECK(c.variables[1].unit == "Pa");
  CHECK(c.case_text == sample_common().case_text);
  CHECK(c.lineage.parent_file == "../parent.h5");
  CHECK(c.lineage.changes == std::vector<std::string>{"boundary.inflow=2.0"});
  const IoOptions back = u.options();
  for (const auto& row : options_table()) CHECK(option_string(back, row.name) == option_string(o, row.name));
  CHECK(back.zfp_accuracy == 0.1 + 0.2);
  const StepInfo s = u.step();
  CHECK(s.step == 42);
  CHECK(s.fields.size() == 2);
  CHECK(s.fields[1].slot == 2);
  CHECK(s.fields[1].float32);
  CHECK(s.case_overrides == std::vector<std::string>{"physics.nu=0.002"});
  REQUIRE(s.monitor_state.size() == 2);
  CHECK(std::isnan(s.monitor_state[1]));
  CHECK(s.scalars == std::vector<Scalar>{{"drag", 0.1 + 0.2}, {"energy", -2.5}});  // every bit
  const FileError e = u.error();
  CHECK(e.kind() == ErrorKind::no_such_step);
  CHECK(e.problem() == "step 7 is not committed");
}

TEST_CASE("a message cut short anywhere is refused, never read past its end", "[kernel]") {
  Packer p;
  p.put(sample_common());
  p.put(sample_step());
  const std::vector<std::byte> whole = p.bytes();
  for (std::size_t n = 0; n < whole.size(); ++n) {
    const std::vector<std::byte> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    Unpacker u(cut);
    INFO("cut at " << n << " of " << whole.size() << " bytes");
    CHECK_THROWS_AS((u.common(), u.step()), FileError);
  }
  // A length field claiming more than the message holds (a garbled string size).
  Packer q;
  q.put(std::uint64_t{1} << 40);
  Unpacker u(q.bytes());
  CHECK_THROWS_AS(u.string(), FileError);
}

TEST_CASE("the grids' interiors arrive whole, with or without halos", "[kernel]") {
  for (int halo : {0, 1, 2}) {
    INFO("halo " << halo);
    const BlockShape b{5, 3, 2};
    const std::size_t padded = static_cast<std::size_t>((5 + 2 * halo) * (3 + 2 * halo) * (2 + 2 * halo));
    // Two grids, slots 0 and 2 written (slot 1 unused), cell types; every padded value
    // distinct, so a wrong offset or a halo cell shows.
    std::vector<std::vector<double>> f(6, std::vector<double>(padded));
    std::vector<std::vector<std::uint8_t>> t(2, std::vector<std::uint8_t>(padded));
    for (std::size_t a = 0; a < f.size(); ++a)
      for (std::size_t i = 0; i < padded; ++i) f[a][i] = 1000.0 * static_cast<double>(a) + static_cast<double>(i);
    for (std::size_t g = 0; g < 2; ++g)
      for (std::size_t i = 0; i < padded; ++i) t[g][i] = static_cast<std::uint8_t>(7 * g + i);
    LocalGrids lg;
    lg.block = b;
    lg.halo = halo;
    for (std::size_t g = 0; g < 2; ++g) {
      GridRecord r;
      r.uid = 100 + g;
      r.level = static_cast<int>(g);
      r.parent_uid = g == 0 ? kNoUid : 100;
      if (g == 0) r.child_uids = {101};
      r.fields = {f[3 * g].data(), f[3 * g + 1].data(), f[3 * g + 2].data()};
      r.cell_type = t[g].data();
      lg.grids.push_back(r);
    }
    StepInfo info{1, 0.0, 0.1, StepKind::checkpoint, {{"cell_data", "u", 0}, {"cell_data", "p", 2}}, true, {}, {}};
    std::vector<std::byte> slot;
    const LocalGrids out = round_trip(slot_layout(info, true, nullptr), lg, slot);
    CHECK(slot.size() == 2 * (2 * 30 * sizeof(double) + 30));  // interiors only: 5 x 3 x 2 cells
    REQUIRE(out.grids.size() == 2);
    CHECK(out.halo == 0);
    CHECK(out.grids[1].parent_uid == 100);
    // The rank the file records for each grid: the compute rank that sent it, not the writer.
    CHECK(out.grids[0].rank == 3);
    CHECK(out.grids[1].rank == 3);
    CHECK(out.grids[0].child_uids == std::vector<std::uint64_t>{101});
    CHECK(out.grids[0].fields[1] == nullptr);  // not written: not sent
    bool same = true;
    for (std::size_t g = 0; g < 2; ++g) {
      // Each interior cell against the padded value it came from.
      const int px = 5 + 2 * halo, py = 3 + 2 * halo;
      std::size_t q = 0;
      for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 3; ++y)
          for (int x = 0; x < 5; ++x, ++q) {
            const auto at = static_cast<std::size_t>(((z + halo) * py + y + halo) * px + x + halo);
            same = same && out.grids[g].fields[0][q] == 1000.0 * static_cast<double>(3 * g) + static_cast<double>(at);
            same = same && out.grids[g].fields[2][q] == 1000.0 * static_cast<double>(3 * g + 2) + static_cast<double>(at);
            same = same && out.grids[g].cell_type[q] == static_cast<std::uint8_t>(7 * g + at);
          }
    }
    CHECK(same);
  }
}

TEST_CASE("a step for a consumer arrives padded: every halo cell, its fields and the written ones", "[kernel]") {
  for (int halo : {0, 1, 2}) {
    INFO("halo " << halo);
    const BlockShape b{4, 3, 1};  // 2-D: a halo in z too
    const auto padded = static_cast<std::size_t>((4 + 2 * halo) * (3 + 2 * halo) * (1 + 2 * halo));
    std::vector<std::vector<double>> f(4, std::vector<double>(padded));
    std::vector<std::uint8_t> t(padded);
    for (std::size_t a = 0; a < f.size(); ++a)
      for (std::size_t i = 0; i < padded; ++i) f[a][i] = 1000.0 * static_cast<double>(a) + static_cast<double>(i) + 0.5;
    for (std::size_t i = 0; i < padded; ++i) t[i] = static_cast<std::uint8_t>(3 * i + 1);
    LocalGrids lg;
    lg.block = b;
    lg.halo = halo;
    GridRecord r;
    r.uid = 7;
    r.fields = {f[0].data(), f[1].data(), f[2].data(), f[3].data()};
    r.cell_type = t.data();
    lg.grids.push_back(r);
    // Written: slot 3 (visualisation, no cell types); for the consumer: slots 0 and 1.
    StepInfo info{5, 0.5, 0.1, StepKind::visualisation, {{"cell_data", "T", 3}}, false, {}, {}};
    const std::vector<FieldSpec> consume{{"cell_data", "u", 0}, {"cell_data", "v", 1}};
    const SlotLayout layout = slot_layout(info, true, &consume);
    CHECK(layout.slots == std::vector<int>{0, 1, 3});
    CHECK(layout.padded);
    CHECK(layout.types);  // the consumer gets the cell types even when the file does not
    std::vector<std::byte> slot;
    const LocalGrids out = round_trip(layout, lg, slot);
    CHECK(slot.size() == 3 * padded * sizeof(double) + padded);
    REQUIRE(out.grids.size() == 1);
    CHECK(out.halo == halo);
    CHECK(out.block == b);
    const GridRecord& g = out.grids[0];
    REQUIRE(g.fields.size() == 4);
    CHECK(g.fields[2] == nullptr);  // neither written nor consumed: not sent
    REQUIRE(g.cell_type != nullptr);
    bool same = true;
    for (std::size_t i = 0; i < padded; ++i) {
      for (int a : {0, 1, 3}) same = same && g.fields[static_cast<std::size_t>(a)][i] == f[static_cast<std::size_t>(a)][i];
      same = same && g.cell_type[i] == t[i];
    }
    CHECK(same);
    // Only for the consumer (not written): the written fields are not sent.
    const SlotLayout alone = slot_layout(info, false, &consume);
    CHECK(alone.slots == std::vector<int>{0, 1});
    CHECK(slot_bytes(alone, lg) == static_cast<std::int64_t>(2 * padded * sizeof(double) + padded));
  }
}

TEST_CASE("a slot's layout: the written fields' arrays, interiors only; a consumer's, padded, with cell types",
          "[kernel]") {
  StepInfo info = sample_step();  // fields in slots 0 and 2, cell_type written
  info.fields.push_back({"previous_cell_data", "u", 0});  // the same array twice: shipped once
  const SlotLayout written = slot_layout(info, true, nullptr);
  CHECK(written.slots == std::vector<int>{0, 2});
  CHECK_FALSE(written.padded);
  CHECK(written.types);
  info.write_cell_type = false;
  CHECK_FALSE(slot_layout(info, true, nullptr).types);
  const std::vector<FieldSpec> consume = {{"cell_data", "v", 5}, {"cell_data", "u", 0}};
  const SlotLayout both = slot_layout(info, true, &consume);
  CHECK(both.slots == std::vector<int>{0, 2, 5});
  CHECK(both.padded);
  CHECK(both.types);  // a consumer always gets the cell types
  const SlotLayout only = slot_layout(info, false, &consume);  // for the consumer, not written
  CHECK(only.slots == std::vector<int>{0, 5});
  CHECK(only.padded);

  // Bytes: 8 per value of every shipped array, 1 per cell type; a 4 x 2 x 1 block with a
  // halo of 2 ships 8 x 6 x 5 = 240 cells padded, 8 as an interior.
  LocalGrids lg;
  lg.block = {4, 2, 1};
  lg.halo = 2;
  lg.grids.resize(3);
  CHECK(slot_bytes(written, lg) == 3 * (2 * 8 * 8 + 8));
  CHECK(slot_bytes(both, lg) == 3 * (3 * 8 * 240 + 240));
  CHECK(slot_bytes(only, lg) == 3 * (2 * 8 * 240 + 240));
  lg.grids.clear();
  CHECK(slot_bytes(both, lg) == 0);
}
