// The progress line's time left (driver::hms): what a user reads while a run goes on,
// including a run whose time step collapses (an unstable run's dt of 1e-150 once
// printed "ETA -153722867280912930:-8").
#include <catch2/catch.hpp>

#include <limits>

#include "rewind/driver/observers.hpp"

using rwd::driver::hms;

TEST_CASE("hms prints minutes and hours, and no garbage for absurd times") {
  CHECK(hms(0.0) == "00:00");
  CHECK(hms(59.4) == "00:59");
  CHECK(hms(61.0) == "01:01");
  CHECK(hms(3600.0) == "1:00:00");
  CHECK(hms(99.0 * 3600.0 + 59 * 60 + 59) == "99:59:59");
  CHECK(hms(100.0 * 3600.0) == ">100 h");
  CHECK(hms(1e150) == ">100 h");
  CHECK(hms(std::numeric_limits<double>::max()) == ">100 h");
  CHECK(hms(-1.0) == "--:--");
  CHECK(hms(std::numeric_limits<double>::infinity()) == "--:--");
  CHECK(hms(std::numeric_limits<double>::quiet_NaN()) == "--:--");
}
