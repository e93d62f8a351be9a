#include "case_sections.hpp"

#include <algorithm>

namespace rwd::cli {

void mark_sections_of_other_modules(spacetree::CaseDocument& doc, const std::vector<std::string>& parsed_here) {
  // Every section a Rewind case file may hold, by owner:
  //   spacetree: case, domain, tree, run;  solver: physics, time, boundary,
  //   obstacle, initial, solver, monitor;  kernel: output.
  static const std::vector<std::string> all = {"case",     "domain",   "tree",   "run",     "physics",
                                               "time",     "boundary", "obstacle", "initial", "solver",
                                               "monitor",  "output"};
  for (const auto& s : all)
    if (std::find(parsed_here.begin(), parsed_here.end(), s) == parsed_here.end()) doc.mark_read(s);
}

}  // namespace rwd::cli
