// The case-file key table: every key a Rewind case file may hold, declared once.
//
// CaseDocument's getters look every key up here (a key read without a row is a
// std::logic_error, so a parser cannot grow a key the table does not declare), take
// a missing key's default from the row, and check the value against the row's range
// or choices. The unknown-key check suggests rows ("did you mean"), the restart policy
// (refuse tree changes; time.end only extends) and the steerable parameters read the
// row's flags, and `rewind keys` / docs/case-reference.md print the table.
//
// Row names are patterns: `boundary.<face>.type` stands for the six faces,
// `obstacle[].radius` for every [[obstacle]], `output.io.<option>` for the kernel's
// I/O options table (kernel::options_table(), which documents those rows itself).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rwd::config {

enum class KeyType : std::uint8_t {
  number,            ///< a float or an integer
  integer,
  boolean,
  string,
  number3,           ///< [x, y, z]
  integer3,
  boolean3,
  strings,           ///< an array of strings
  number_or_string,  ///< a number, or one of the row's words (boundary temperature)
  option,            ///< output.io.<option>: the kernel's table gives the type
};

/// What a different value does on `rewind run --restart`.
enum class OnRestart : std::uint8_t {
  fixed,  ///< refused: the run continues on the tree stored in the file
  /// a deeper value or a new region branches onto the stored tree refined further (the
  /// new grids interpolated from their parents); one that would coarsen it is refused
  refines,
  branches,  ///< a new value writes a branch (an equal one continues the file)
  extends,   ///< continues the same file (time.end, time.max_steps)
};

/// An interval of allowed values; infinite ends are open.
struct KeyRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = true, max_open = true;
  [[nodiscard]] bool bounded() const;
  [[nodiscard]] bool contains(double v) const;
  /// "(0, 10]", "> 0", ">= 1", "" for any value.
  [[nodiscard]] std::string text() const;
  /// "must be positive", "must be positive and at most 1", "must be in (0, 2)", ... (no value). Pure.
  [[nodiscard]] std::string requirement() const;
};

struct CaseKey {
  std::string name{};                ///< pattern, e.g. "physics.nu", "boundary.<face>.type"
  KeyType type = KeyType::number;
  std::string unit{};                ///< "m^2/s"; "" when dimensionless or not a quantity
  bool required = false;
  /// The default as TOML text ("0.5", "[2, 2, 2]", "\"wall\"") that getters return
  /// for a missing key; "" when the code derives it (then `default_note` says how and
  /// the reader passes it as the getter's fallback) or the key is required.
  std::string default_toml{};
  std::string default_note{};        ///< documents a derived default ("deepest refine level")
  KeyRange range{};                  ///< per component for number3
  /// What the value must also satisfy relative to other keys ("0 or >= time.end / 1e6"),
  /// checked once the case is read (run_times.hpp); "" for none.
  std::string range_note{};
  std::vector<std::string> choices{};  ///< allowed strings (string, number_or_string)
  OnRestart on_restart = OnRestart::branches;
  bool steerable = false;            ///< may change while the run goes (rewind steer)
  std::string description{};

  [[nodiscard]] std::string section() const;        ///< "physics", "boundary.<face>", "obstacle[]"
  [[nodiscard]] std::string default_text() const;   ///< "required", "0.5", the note
  [[nodiscard]] std::string type_text() const;      ///< "number", "[number x3]", ...
};

/// Every row, in documentation order. Pure.
const std::vector<CaseKey>& case_keys();
/// The row whose pattern `key` matches ("boundary.xmin.type" -> boundary.<face>.type,
/// "obstacle[2].radius" -> obstacle[].radius), or nullptr. Pure.
const CaseKey* find_case_key(const std::string& key);
/// True if `key` is a table that holds rows ("boundary.xmin", "obstacle[0]", "tree"). Pure.
bool is_case_section(const std::string& key);
/// What `rewind run --restart` does with a new value of `key`: its row's policy; for a
/// whole table or array ("tree.refine=[...]", "domain={...}") the strictest of the rows
/// under it (in the enumerators' order, fixed first); branches for a key without a row
/// (the case parser names it first). Pure.
OnRestart on_restart_of(const std::string& key);
/// The row `key` must have (a reader's key): throws std::logic_error naming the key
/// if the table has no row for it.
const CaseKey& case_key(const std::string& key);
/// Edits (insert, delete, substitute, swap two neighbours) from a to b. Pure.
std::size_t edit_distance(const std::string& a, const std::string& b);
/// A typo of `key`, not another word: 1 or 2 edits, and fewer than half the letters. Pure.
bool looks_like(const std::string& typo, const std::string& key);
/// The name of `names` that `typo` most likely misspells ("did you mean"), or "". Pure.
std::string closest_name(const std::string& typo, const std::vector<std::string>& names);
/// The top-level sections of the table ("case", "domain", ... "output"). Pure.
std::vector<std::string> case_sections();

}  // namespace rwd::config
