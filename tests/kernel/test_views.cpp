// The stock-ParaView views' limit (views.hpp, kMaxViewCells): a step of more cells gets no
// view: refused with one line naming the count, the limit and the plugin, before anything
// is written (no views folder, no series file). Views within the limit: views_stock and
// kernel_views_pvpython.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"
#include "rewind/kernel/views.hpp"

namespace fs = std::filesystem;
using namespace rwd::kernel;

namespace {

/// A topology of `n` grids side by side along x (counts and boxes only).
StepTopology row_of_grids(std::int64_t n) {
  StepTopology t;
  t.n_grids = n;
  t.level.assign(static_cast<std::size_t>(n), 0);
  for (std::int64_t i = 0; i < n; ++i)
    t.bbox.push_back({static_cast<double>(i), static_cast<double>(i + 1), 0, 1, 0, 1});
  t.level_offsets = {0, n};
  return t;
}

}  // namespace

TEST_CASE("a step too large for a stock view gets none, with one line saying why", "[kernel][views]") {
  const fs::path dir = fs::temp_directory_path() / ("rewind_views_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string run = (dir / "big.h5").string();
  CommonInfo cm;
  cm.dim = 3;
  cm.block = {64, 64, 64};  // 262 144 cells per grid
  StepEntry e;
  e.step = 7;
  e.time = 0.5;
  const std::int64_t per_grid = cm.block.cells(), fit = kMaxViewCells / per_grid;
  try {
    write_step_view(run, cm, e, row_of_grids(fit + 1), {});
    FAIL("a view of more than kMaxViewCells cells was written");
  } catch (const FileError& x) {
    const std::string what = x.what();
    CAPTURE(what);
    CHECK(x.kind() == ErrorKind::invalid_argument);
    CHECK(what.find(std::to_string((fit + 1) * per_grid) + " cells") != std::string::npos);
    CHECK(what.find(std::to_string(kMaxViewCells)) != std::string::npos);
    CHECK(what.find("Rewind plugin") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK_FALSE(fs::exists(views_directory(run)));  // nothing written
  CHECK_FALSE(fs::exists(series_path(run)));
  fs::remove_all(dir);
}
