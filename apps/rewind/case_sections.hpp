// Loading a case file for a subcommand, with every module's sections checked.
#pragma once
#include <string>
#include <vector>

#include "rewind/spacetree/case_file.hpp"

namespace rwd::cli {

/// Top-level case sections owned by modules a subcommand does not parse itself;
/// marked as known so that only genuinely unknown sections are refused.
void mark_sections_of_other_modules(spacetree::CaseDocument& doc, const std::vector<std::string>& parsed_here);

}  // namespace rwd::cli
