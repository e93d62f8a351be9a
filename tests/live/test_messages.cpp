// The live link's frames (rewind/live/messages.hpp): every kind round-trips unchanged,
// and a frame cut short, with a byte changed in its header, of another version or of an
// out-of-range value is refused with wire::WireError — never read past its end. And the
// runs a window's pieces travel in (runs_of): the compute ranks and the collector cut alike.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>

#include "rewind/live/link.hpp"
#include "rewind/live/messages.hpp"
#include "rewind/live/tree.hpp"
#include "rewind/wire/wire.hpp"

using namespace rwd::live;
using rwd::collector::ControlAction;
using rwd::collector::RunState;
using rwd::wire::WireError;

namespace {

std::vector<Command> sample_commands() {
  WindowCommand w;
  w.vars = {"u", "p", "T"};
  w.pieces = {{1, 0, {0, 0, 0}, {4, 4, 1}, 1}, {(2ull << 58) | 77, 3, {2, 1, 0}, {3, 2, 1}, 2},
              {std::numeric_limits<std::uint64_t>::max() - 1, 1, {7, 7, 0}, {1, 1, 1}, 8}};
  w.slots = {42, 43};
  w.shm = SegmentName{"vm/6a1b-boot", 1234, 17, 0xdeadbeefcafef00dull, 123456789};
  w.file = "run.branch12.h5";
  WindowCommand bare;  // no pieces, no shared memory
  return {w,
          bare,
          Hold{},
          Release{},
          ControlCommand{ControlAction::stop},
          ControlCommand{ControlAction::resume, "a.h5"},
          ParametersQuery{},
          SetCommand{{{"physics.nu", 0.002}, {"boundary.xmin.velocity", std::array<double, 3>{1.2, 0, -0.5}}}},
          SetCommand{{{"physics.nu", 0.003}}, "b.h5"},
          BranchCommand{"run.h5@t=1.5", {{{{"physics.nu", 1e-3}}, "b.h5"}}},
          BranchCommand{"x.h5@#0", {{}}},
          BranchCommand{"@5",
                        {{{{"physics.nu", 1e-3}}, "a.h5"},
                         {{}, ""},
                         {{{"boundary.xmin.velocity", std::array<double, 3>{2, 0, 0}}}, "c.h5"}}},
          Bye{},
          DetailsCommand{"u", ""},
          DetailsCommand{"p", "b.h5"}};
}

Reply sample_reply() {
  Reply r;
  r.step = 1234;
  r.time = 1.0 / 3.0;
  r.file = "run.branch1234.h5";
  r.parent = "run.h5";
  r.state = RunState::paused;
  r.parameters = {{"physics.nu", 0.001, "m^2/s", 0, 10, "kinematic viscosity", true, false},
                  {"boundary.xmin.velocity", std::array<double, 3>{1.5, 0, 0}, "m/s", -100, 100, "inflow"}};
  r.applied = {"physics.nu=0.002"};
  r.files = {"run.branch1234.h5", "b.h5"};
  r.uids = {0, (1ull << 58) | 3, std::numeric_limits<std::uint64_t>::max() - 1};
  r.details = {0.25, 0.0, 1e-300};
  r.shares = {0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.4, 1e-300, 0.0, 5.0, 0.5};  // 4 octants each (RWLV 9)
  r.ranges = {-1.5, 2.25, 0.0, 1e-3};  // two variables' {min, max} (RWLV 8)
  return r;
}

}  // namespace

TEST_CASE("every command, reply and status crosses the live link unchanged", "[live]") {
  for (const auto& c : sample_commands()) {
    const auto f = encode(c);
    CHECK(frame_type(f) == static_cast<std::uint16_t>(op_of(c)));
    CHECK(decode_command(f) == c);
  }
  const Reply r = sample_reply();
  CHECK(decode_reply(encode(r)) == r);
  Reply odd = r;  // a peer's shares that are not max_children per grid
  odd.shares.pop_back();
  CHECK_THROWS_AS(decode_reply(encode(odd)), WireError);
  odd.shares.clear();  // none at all: a step that would store none
  CHECK(decode_reply(encode(odd)) == odd);
  Reply refused;
  refused.ok = false;
  refused.message = "unknown variable 'rho'";
  CHECK(decode_reply(encode(refused)) == refused);
  Status s{RunState::finished, 99, 2.5, "f.h5", "p.h5", {"p.h5", "f.h5"}, 1000, 12.5, 4};
  CHECK(decode_status(encode(s)) == s);
  s.futures = {{"a.h5", "p.h5", RunState::running, 120, 3.0, 20, 1.5, {"boundary.xmin.velocity=2,0,0"}},
               {"b.h5", "p.h5", RunState::paused, 117, 2.9, 17, 1.5, {}, 2, 2}};  // on compute ranks 2-3
  CHECK(decode_status(encode(s)) == s);
}

TEST_CASE("a frame cut short, altered or of another kind is refused, never read past its end", "[live]") {
  const auto f = encode(sample_commands().front());
  for (std::size_t n = 0; n < f.size(); ++n) {
    const std::vector<std::byte> cut(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK_THROWS_AS(decode_command(cut), WireError);
  }
  auto version = f;
  version[4] = std::byte{kVersion + 1};  // header version: another one
  CHECK_THROWS_AS(decode_command(version), WireError);
  auto magic = f;
  magic[0] = std::byte{'X'};
  CHECK_THROWS_AS(decode_command(magic), WireError);
  CHECK_THROWS_AS(decode_reply(f), WireError);   // a command is no reply
  CHECK_THROWS_AS(decode_status(encode(sample_reply())), WireError);
  // An action byte out of range.
  auto control = encode(ControlCommand{ControlAction::pause});
  control.back() = std::byte{9};
  CHECK_THROWS_AS(decode_command(control), WireError);
  // Trailing bytes.
  auto longer = encode(Bye{});
  longer.push_back(std::byte{0});
  CHECK_THROWS_AS(decode_command(longer), WireError);
}

TEST_CASE("a piece with a negative owner, place or size is refused", "[live]") {
  WindowCommand w;
  w.vars = {"u"};
  w.pieces = {{5, -1, {0, 0, 0}, {1, 1, 1}, 1}};
  CHECK_THROWS_AS(decode_command(encode(w)), WireError);
  w.pieces = {{5, 0, {0, -2, 0}, {1, 1, 1}, 1}};
  CHECK_THROWS_AS(decode_command(encode(w)), WireError);
  w.pieces = {{5, 0, {0, 0, 0}, {1, 1, 1}, 0}};
  CHECK_THROWS_AS(decode_command(encode(w)), WireError);
}

TEST_CASE("a window's pieces travel in runs of one owner, cut once a run holds the cap", "[live]") {
  const auto piece = [](int owner, int nx) { return PiecePlacement{0, owner, {0, 0, 0}, {nx, 2, 1}, 1}; };
  SECTION("a run is cut where the owner changes and at the first piece beyond the cap") {
    // cells 8, 8, 8, 8 | 4 | 8 of owners 0, 0, 0, 0 | 1 | 0; cap 16: runs 16 + 16 of owner 0.
    const auto runs = runs_of({piece(0, 4), piece(0, 4), piece(0, 4), piece(0, 4), piece(1, 2), piece(0, 4)}, 16);
    REQUIRE(runs.size() == 4);
    const std::vector<std::array<std::uint64_t, 5>> want{
        {0, 0, 2, 0, 16}, {0, 2, 4, 16, 16}, {1, 4, 5, 32, 4}, {0, 5, 6, 36, 8}};
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto& x = runs[r];
      CHECK(std::array<std::uint64_t, 5>{static_cast<std::uint64_t>(x.owner), x.first, x.last, x.at, x.cells} ==
            want[r]);
    }
  }
  SECTION("random pieces: the runs cover every piece once, in order, each of one owner below the cap") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<PiecePlacement> pieces(rng() % 60);
      for (auto& p : pieces) p = piece(static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 40));
      const std::uint64_t cap = 1 + rng() % 200;
      std::size_t next = 0;
      std::uint64_t at = 0;
      const auto runs = runs_of(pieces, cap);
      for (std::size_t r = 0; r < runs.size(); ++r) {
        const auto& x = runs[r];
        REQUIRE(x.first == next);
        REQUIRE(x.last > x.first);
        REQUIRE(x.at == at);
        std::uint64_t cells = 0;
        for (std::size_t i = x.first; i < x.last; ++i) {
          REQUIRE(pieces[i].owner == x.owner);
          if (i > x.first) REQUIRE(cells < cap);  // a piece joins a run only below the cap
          cells += pieces[i].cells();
        }
        REQUIRE(x.cells == cells);
        // A run of the same owner follows only one that reached the cap.
        if (r > 0 && runs[r - 1].owner == x.owner) REQUIRE(runs[r - 1].cells >= cap);
        next = x.last, at += cells;
      }
      REQUIRE(next == pieces.size());
    }
  }
  SECTION("the default cap: a rank's million cells of a 34.6 MB window go in 16 runs") {
    const std::vector<PiecePlacement> pieces(512, PiecePlacement{0, 0, {0, 0, 0}, {16, 16, 8}, 1});
    CHECK(runs_of(pieces).size() == 16);
  }
}

TEST_CASE("a reply whose details and grids differ in number is refused", "[live]") {
  Reply r = sample_reply();
  r.details.pop_back();
  CHECK_THROWS_AS(decode_reply(encode(r)), WireError);
}

TEST_CASE("a reply with half a range (an odd count of numbers) is refused", "[live]") {
  Reply r = sample_reply();
  r.ranges.pop_back();
  CHECK_THROWS_AS(decode_reply(encode(r)), WireError);
}
