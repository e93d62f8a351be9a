#include "case_sections.hpp"

#include <algorithm>

#include "rewind/config/run_times.hpp"

namespace rwd::cli {

void mark_sections_of_other_modules(config::CaseDocument& doc, const std::vector<std::string>& parsed_here) {
  // Every section a Rewind case file may hold: the key table's.
  static const std::vector<std::string> all = config::case_sections();
  for (const auto& s : all)
    if (std::find(parsed_here.begin(), parsed_here.end(), s) == parsed_here.end()) doc.mark_read(s);
}

void read_case_header(config::CaseDocument& doc) {
  (void)doc.get_string("case.name");
  (void)doc.get_string("case.description");
}

config::TreeCase load_tree_case(const std::string& file, const std::vector<std::string>& overrides) {
  auto doc = config::CaseDocument::load(file, overrides);
  read_case_header(doc);
  auto tc = config::parse_tree_case(doc);
  // A case with times: those a run could not honour are refused here too, before a run.
  if (doc.has("time.end")) config::check_run_times(doc);
  mark_sections_of_other_modules(doc, {"case", "domain", "tree", "run"});
  doc.reject_unknown();
  return tc;
}

}  // namespace rwd::cli
