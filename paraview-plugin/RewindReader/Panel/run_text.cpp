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
    for (const auto& f : s.futures) o << "\n  " << f.file << "  " << collector::to_string(f.state) << " at step " << f.step;
  }
  return QString::fromStdString(o.str());
}

}  // namespace rwd::paraview
