// Case files: TOML, strictly checked.
//
// A CaseDocument wraps one parsed TOML file plus `--set key=value` overrides. Every
// module reads its own keys through it (tree, solver, output); each read is
// recorded, and reject_unknown() then names the first key nobody read. Every error
// is a CaseError whose what() is one line naming the file and the key.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/config/case_keys.hpp"
#include "rewind/spacetree/tree.hpp"

namespace rwd::config {

class CaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CaseDocument {
 public:
  /// Parses `path`, then applies overrides "a.b=value" (value in TOML syntax; a bare
  /// word that is not valid TOML is taken as a string). Throws CaseError.
  static CaseDocument load(const std::string& path, const std::vector<std::string>& overrides = {});
  /// Same, from text (`name` is used in messages).
  static CaseDocument parse(const std::string& text, const std::string& name,
                            const std::vector<std::string>& overrides = {});
  CaseDocument(CaseDocument&&) noexcept;
  CaseDocument& operator=(CaseDocument&&) noexcept;
  ~CaseDocument();

  [[nodiscard]] const std::string& name() const;
  /// The effective case (overrides applied) as TOML text, for the output file.
  [[nodiscard]] std::string effective_text() const;

  [[nodiscard]] bool has(const std::string& key) const;
  /// The value at `key` as TOML text ("0.001", "[1.5, 0.0, 0.0]"), "" if absent: to tell
  /// whether an override changes anything.
  [[nodiscard]] std::string value_text(const std::string& key) const;
  /// True if `key` is present and holds a number (integer or float).
  [[nodiscard]] bool is_number(const std::string& key) const;
  /// The number, or array of numbers, at `key`, unchecked by the key table (for a client
  /// that passes values on to a server that checks them). Throws CaseError for anything
  /// else. Not a read: reject_unknown() still refuses the key.
  [[nodiscard]] std::vector<double> numbers(const std::string& key) const;
  // Typed getters for dotted keys ("tree.depth"), each declared in the key table
  // (case_keys.hpp). Missing key -> the table's default; for a row whose default the
  // code derives, the reader's fallback; else CaseError ("missing"). Wrong type/shape,
  // a value outside the row's range or choices -> CaseError naming key and value. A
  // key without a row, a getter of another type than the row's, or a fallback for a
  // row that declares its default -> std::logic_error (a programming error).
  [[nodiscard]] double get_double(const std::string& key, std::optional<double> fallback = {});
  [[nodiscard]] std::int64_t get_int(const std::string& key, std::optional<std::int64_t> fallback = {});
  [[nodiscard]] bool get_bool(const std::string& key, std::optional<bool> fallback = {});
  [[nodiscard]] std::string get_string(const std::string& key, std::optional<std::string> fallback = {});
  [[nodiscard]] std::array<double, 3> get_double3(const std::string& key, std::optional<std::array<double, 3>> fallback = {});
  [[nodiscard]] std::array<int, 3> get_int3(const std::string& key, std::optional<std::array<int, 3>> fallback = {});
  [[nodiscard]] std::array<bool, 3> get_bool3(const std::string& key, std::optional<std::array<bool, 3>> fallback = {});
  [[nodiscard]] std::vector<std::string> get_strings(const std::string& key,
                                                     std::optional<std::vector<std::string>> fallback = {});
  /// Number of tables in the array of tables `key` ([[key]]); 0 if absent.
  [[nodiscard]] std::size_t count(const std::string& key);
  /// Marks a table key as known without reading a value (e.g. a section kept for later).
  void mark_read(const std::string& key);

  /// Throws CaseError naming the first key that no reader asked for: a key the table
  /// does not know, with the key it most likely misspells ("did you mean ...?"), or a
  /// known key this case does not use (a velocity on a plain wall).
  void reject_unknown() const;
  /// The CaseError for a required `key` that is absent: "unknown key 'tree.depht' (did
  /// you mean 'tree.depth'?)" when a key next to it looks like a typo of it, else
  /// "<file>: <key>: missing (required)".
  [[nodiscard]] CaseError missing(const std::string& key) const;
  /// A CaseError "<file>: <key>: <message>" for a bad value found by a reader.
  [[nodiscard]] CaseError error(const std::string& key, const std::string& message) const;

 private:
  struct Impl;
  explicit CaseDocument(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A region refined to at least `level`: a box, or a sphere (radius > 0).
struct RefineRegion {
  spacetree::Box box{};
  std::array<double, 3> center{};
  double radius = 0.0;
  int level = 0;
  [[nodiscard]] bool overlaps(const spacetree::Box& grid) const;
};

/// The tree part of a case.
struct TreeCase {
  spacetree::TreeShape shape;
  int base_depth = 1;                  ///< every grid refined at least to this level
  std::vector<RefineRegion> regions;   ///< [[tree.refine]]
  bool balance = true;
  int ranks = 1;                       ///< compute ranks for `rewind tree` statistics
};

/// Reads [domain] and [tree] (and [run].ranks). Throws CaseError.
TreeCase parse_tree_case(CaseDocument& doc);
/// Builds the tree: base_depth everywhere, regions, then balance (adapt -> balance).
spacetree::Tree build_tree(const TreeCase& c);

}  // namespace rwd::config
