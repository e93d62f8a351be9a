// Rebuilds the views of a run file offline (rwd::kernel::regenerate_views), as after a
// crash while a view was written: tests/apps/views_stock.sh removes a run's views, runs
// this and checks the rebuilt ones in stock ParaView against the file.
//   kernel_regen_views RUN.h5
#include <cstdio>
#include <exception>

#include "rewind/kernel/views.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s RUN.h5\n", argv[0]);
    return 2;
  }
  try {
    rwd::kernel::regenerate_views(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
