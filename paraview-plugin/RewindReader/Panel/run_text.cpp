#include "run_text.hpp"

#include <sstream>

namespace rwd::paraview {

QString describe_run(const collector::RunStatus& s) {
  std::ostringstream o;
  o << collector::to_string(s.state) << " at step " << s.step << " (t = " << s.time << "), " << s.steps_per_second
    << " steps/s, " << s.ranks << (s.ranks == 1 ? " rank\n" : " ranks\n") << s.file;
  if (!s.parent.empty()) o << "\nbranched from " << s.parent;
  if (s.futures.size() > 1) {
    o << "\n" << s.futures.size() << " futures:";
    for (const auto& f : s.futures) {
      o << "\n  " << f.file << "  " << collector::to_string(f.state) << " at step " << f.step;
      // Where it computes (1.12; a 1.11 server does not say) and what it changed.
      if (f.ranks == 1) o << ", on compute rank " << f.first_rank;
      if (f.ranks > 1) o << ", on compute ranks " << f.first_rank << "-" << f.first_rank + f.ranks - 1;
      for (std::size_t i = 0; i < f.changes.size(); ++i) o << (i == 0 ? ", " : "; ") << f.changes[i];
    }
  }
  return QString::fromStdString(o.str());
}

}  // namespace rwd::paraview
