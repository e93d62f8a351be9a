// The live link's frames (rewind/live/messages.hpp): every kind round-trips unchanged,
// and a frame cut short, with a byte changed in its header, of another version or of an
// out-of-range value is refused with wire::WireError — never read past its end.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "rewind/live/messages.hpp"
#include "rewind/live/tree.hpp"
#include "rewind/wire/wire.hpp"

using namespace rwd::live;
using rwd::wire::WireError;

namespace {

std::vector<Command> sample_commands() {
  WindowCommand w;
  w.vars = {"u", "p", "T"};
  w.pieces = {{1, 0, {0, 0, 0}, {4, 4, 1}, 1}, {(2ull << 58) | 77, 3, {2, 1, 0}, {3, 2, 1}, 2},
              {std::numeric_limits<std::uint64_t>::max() - 1, 1, {7, 7, 0}, {1, 1, 1}, 8}};
  w.slots = {42, 43};
  w.shm = SegmentName{"vm/6a1b-boot", 1234, 17, 0xdeadbeefcafef00dull, 123456789};
  WindowCommand bare;  // no pieces, no shared memory
  return {w, bare, Hold{}, Release{}, ControlCommand{Action::stop}, ControlCommand{Action::resume}, ParametersQuery{},
          SetCommand{{{"physics.nu", {0.002}}, {"boundary.xmin.velocity", {1.2, 0, -0.5}}}},
          BranchCommand{"run.h5@t=1.5", {{"physics.nu", {1e-3}}}, "b.h5"}, BranchCommand{"x.h5@#0", {}, ""}, Bye{}};
}

Reply sample_reply() {
  Reply r;
  r.step = 1234;
  r.time = 1.0 / 3.0;
  r.file = "run.branch1234.h5";
  r.parent = "run.h5";
  r.state = State::paused;
  r.parameters = {{"physics.nu", false, "m^2/s", 0, 10, "kinematic viscosity", {0.001}, true, false},
                  {"boundary.xmin.velocity", true, "m/s", -100, 100, "inflow", {1.5, 0, 0}}};
  r.applied = {"physics.nu=0.002"};
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
  Reply refused;
  refused.ok = false;
  refused.message = "unknown variable 'rho'";
  CHECK(decode_reply(encode(refused)) == refused);
  Status s{State::finished, 99, 2.5, "f.h5", "p.h5", {"p.h5", "f.h5"}, 1000, 12.5, 4};
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
  auto control = encode(ControlCommand{Action::pause});
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
