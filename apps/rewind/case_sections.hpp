// Loading a case file for a subcommand, with every module's sections checked.
#pragma once
#include <string>
#include <vector>

#include "rewind/config/case_file.hpp"

namespace rwd::cli {

/// Top-level case sections owned by modules a subcommand does not parse itself;
/// marked as known so that only genuinely unknown sections are refused.
void mark_sections_of_other_modules(config::CaseDocument& doc, const std::vector<std::string>& parsed_here);

/// Reads the [case] header (name, description), which every subcommand accepts.
void read_case_header(config::CaseDocument& doc);

/// For subcommands that need only the tree (`rewind tree`, `rewind halo`): loads the
/// case, checks every key (other modules' sections are accepted; with a time.end, the
/// run's times too: config/run_times.hpp) and returns its tree part. Throws CaseError
/// with one line naming the key.
config::TreeCase load_tree_case(const std::string& file, const std::vector<std::string>& overrides);

}  // namespace rwd::cli
