#include "rewind/config/case_file.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>
#include <toml++/toml.h>

namespace rwd::config {

struct CaseDocument::Impl {
  std::string name;
  toml::table table;
  std::set<std::string> read;    // leaf keys asked for
  std::set<std::string> marked;  // whole subtrees declared known
};

CaseDocument::CaseDocument(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CaseDocument::CaseDocument(CaseDocument&&) noexcept = default;
CaseDocument& CaseDocument::operator=(CaseDocument&&) noexcept = default;
CaseDocument::~CaseDocument() = default;

namespace {
std::string where(const toml::source_region& r) {
  if (r.begin.line == 0) return "a --set override";  // nodes made by overrides have no source
  return fmt::format("line {}, column {}", r.begin.line, r.begin.column);
}

// "a.b[2].c=value": dotted keys, with [i] indexing an existing array (of tables, or
// of values for the last component). Tables on the way are created; arrays are not.
void apply_override(toml::table& root, const std::string& name, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw CaseError(fmt::format("{}: --set '{}': expected key=value", name, assignment));
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  const auto fail = [&](const std::string& why) {
    return CaseError(fmt::format("{}: --set '{}': {}", name, assignment, why));
  };
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + text);
  } catch (const toml::parse_error&) {
    parsed = toml::table{};
    parsed.insert("v", text);  // a bare word: take it as a string
  }
  toml::table* t = &root;
  std::size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::optional<std::size_t> index;
    if (const auto br = part.find('['); br != std::string::npos) {
      const auto close = part.find(']', br);
      if (close != part.size() - 1) throw fail("bad index in '" + part + "'");
      try {
        std::size_t used = 0;
        index = std::stoul(part.substr(br + 1, close - br - 1), &used);
        if (used != close - br - 1) throw std::invalid_argument("index");
      } catch (const std::exception&) {
        throw fail("bad index in '" + part + "'");
      }
      part = part.substr(0, br);
    }
    if (part.empty()) throw fail("empty key component");
    const bool last = dot == std::string::npos;
    if (index) {
      auto* arr = t->get_as<toml::array>(part);
      if (!arr) throw fail("'" + part + "' is not an array");
      if (*index >= arr->size()) throw fail(fmt::format("'{}' has {} entries", part, arr->size()));
      if (last) {
        arr->replace(arr->cbegin() + static_cast<std::ptrdiff_t>(*index), *parsed.get("v"));
        return;
      }
      t = (*arr)[*index].as_table();
      if (!t) throw fail(fmt::format("'{}[{}]' is not a table", part, *index));
    } else if (last) {
      t->insert_or_assign(part, *parsed.get("v"));
      return;
    } else {
      auto* node = t->get(part);
      if (!node) node = &t->insert(part, toml::table{}).first->second;
      if (!node->is_table()) throw fail("'" + part + "' is not a table");
      t = node->as_table();
    }
    start = dot + 1;
  }
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}
}  // namespace

CaseDocument CaseDocument::parse(const std::string& text, const std::string& name,
                                 const std::vector<std::string>& overrides) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  try {
    impl->table = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw CaseError(fmt::format("{}: TOML syntax error at {}: {}", name, where(e.source()), e.description()));
  }
  for (const auto& o : overrides) apply_override(impl->table, name, o);
  return CaseDocument(std::move(impl));
}

CaseDocument CaseDocument::load(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) throw CaseError(fmt::format("{}: cannot open case file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, overrides);
}

const std::string& CaseDocument::name() const { return impl_->name; }

std::string CaseDocument::effective_text() const {
  std::stringstream ss;
  ss << impl_->table << '\n';
  return ss.str();
}

bool CaseDocument::has(const std::string& key) const {
  return static_cast<bool>(impl_->table.at_path(key));
}

std::string CaseDocument::value_text(const std::string& key) const {
  const auto view = impl_->table.at_path(key);
  if (!view) return "";
  std::stringstream ss;
  view.node()->visit([&](const auto& n) { ss << n; });
  return ss.str();
}

bool CaseDocument::is_number(const std::string& key) const {
  const auto view = impl_->table.at_path(key);
  return view.is_integer() || view.is_floating_point();
}

CaseError CaseDocument::error(const std::string& key, const std::string& message) const {
  return CaseError(fmt::format("{}: {}: {}", impl_->name, key, message));
}

namespace {
std::pair<std::string, std::string> split_leaf(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return {"", path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

}  // namespace

CaseError CaseDocument::missing(const std::string& key) const {
  const auto [parent, leaf] = split_leaf(key);
  const toml::table* t = parent.empty() ? &impl_->table : impl_->table.at_path(parent).as_table();
  if (t)
    for (const auto& [k, node] : *t) {
      const std::string name(k.str());
      const std::string path = parent.empty() ? name : parent + "." + name;
      if (!impl_->read.count(path) && looks_like(name, leaf))
        return CaseError(fmt::format("{}: unknown key '{}' (at {}; did you mean '{}'?)", impl_->name, path,
                                     where(node.source()), key));
    }
  return error(key, "missing (required)");
}

namespace {
template <typename T>
T scalar(const toml::node& n, const CaseDocument& doc, const std::string& key);

template <>
double scalar<double>(const toml::node& n, const CaseDocument& doc, const std::string& key) {
  if (auto v = n.value_exact<double>()) return *v;
  if (auto v = n.value_exact<std::int64_t>()) return static_cast<double>(*v);
  throw doc.error(key, fmt::format("expected a number, got {}", type_name(n)));
}
template <>
std::int64_t scalar<std::int64_t>(const toml::node& n, const CaseDocument& doc, const std::string& key) {
  if (auto v = n.value_exact<std::int64_t>()) return *v;
  throw doc.error(key, fmt::format("expected an integer, got {}", type_name(n)));
}
template <>
bool scalar<bool>(const toml::node& n, const CaseDocument& doc, const std::string& key) {
  if (auto v = n.value_exact<bool>()) return *v;
  throw doc.error(key, fmt::format("expected true or false, got {}", type_name(n)));
}
template <>
std::string scalar<std::string>(const toml::node& n, const CaseDocument& doc, const std::string& key) {
  if (auto v = n.value_exact<std::string>()) return *v;
  throw doc.error(key, fmt::format("expected a string, got {}", type_name(n)));
}

// The value node of `key`, or its default from the key table (parsed into `holder`),
// or nullptr when the reader's fallback stands for it. The row must exist and allow
// the getter's type; a default declared both in the table and by the reader is a
// programming error, as is a key without a row.
const toml::node* lookup(CaseDocument& doc, toml::table& table, std::set<std::string>& read, const std::string& key,
                         const std::vector<KeyType>& types, bool has_fallback, toml::table& holder,
                         const CaseKey*& row_out) {
  const CaseKey& row = case_key(key);
  row_out = &row;
  if (row.type != KeyType::option && std::find(types.begin(), types.end(), row.type) == types.end())
    throw std::logic_error(fmt::format("case key '{}' is a {} in the key table; read it as one", key, row.type_text()));
  if (has_fallback && (row.required || !row.default_toml.empty()))
    throw std::logic_error(fmt::format("case key '{}': the default is the key table's; pass no fallback", key));
  read.insert(key);
  if (auto view = table.at_path(key)) return view.node();
  if (has_fallback) return nullptr;
  if (row.required || row.default_toml.empty()) throw doc.missing(key);
  holder = toml::parse("v = " + row.default_toml);
  return holder.get("v");
}

void check_number(const CaseDocument& doc, const CaseKey& row, const std::string& key, double v) {
  if (!row.range.contains(v) && (row.range.bounded() || std::isnan(v)))
    throw doc.error(key, fmt::format("{}, got {}", row.range.requirement(), v));
}

void check_word(const CaseDocument& doc, const CaseKey& row, const std::string& key, const std::string& v) {
  if (!row.choices.empty() && std::find(row.choices.begin(), row.choices.end(), v) == row.choices.end())
    throw doc.error(key, fmt::format("unknown value '{}' (one of: {})", v, fmt::join(row.choices, ", ")));
}

template <typename T>
void check_value(const CaseDocument& doc, const CaseKey& row, const std::string& key, const T& v) {
  if constexpr (std::is_same_v<T, std::string>) check_word(doc, row, key, v);
  else if constexpr (!std::is_same_v<T, bool>) check_number(doc, row, key, static_cast<double>(v));
}

template <typename T>
std::vector<KeyType> scalar_types() {
  if constexpr (std::is_same_v<T, double>) return {KeyType::number, KeyType::number_or_string};
  else if constexpr (std::is_same_v<T, std::int64_t>) return {KeyType::integer};
  else if constexpr (std::is_same_v<T, bool>) return {KeyType::boolean};
  else return {KeyType::string, KeyType::number_or_string};
}

template <typename T>
T get_scalar(CaseDocument& doc, toml::table& table, std::set<std::string>& read, const std::string& key,
             const std::optional<T>& fallback) {
  toml::table holder;
  const CaseKey* row = nullptr;
  const auto* node = lookup(doc, table, read, key, scalar_types<T>(), fallback.has_value(), holder, row);
  if (!node) return *fallback;
  const T v = scalar<T>(*node, doc, key);
  check_value(doc, *row, key, v);
  return v;
}

template <typename T, std::size_t N>
std::array<T, N> get_array(CaseDocument& doc, toml::table& table, std::set<std::string>& read, const std::string& key,
                           const std::optional<std::array<T, N>>& fallback) {
  constexpr KeyType type = std::is_same_v<T, double>         ? KeyType::number3
                           : std::is_same_v<T, std::int64_t> ? KeyType::integer3
                                                             : KeyType::boolean3;
  toml::table holder;
  const CaseKey* row = nullptr;
  const auto* node = lookup(doc, table, read, key, {type}, fallback.has_value(), holder, row);
  if (!node) return *fallback;
  const auto* arr = node->as_array();
  if (!arr || arr->size() != N)
    throw doc.error(key, fmt::format("expected an array of {} values", N));
  std::array<T, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = scalar<T>((*arr)[i], doc, key);
    check_value(doc, *row, key, out[i]);
  }
  return out;
}
}  // namespace

std::vector<double> CaseDocument::numbers(const std::string& key) const {
  const auto view = impl_->table.at_path(key);
  if (!view) throw missing(key);
  std::vector<double> out;
  if (const auto* arr = view.as_array()) {
    for (const auto& n : *arr) out.push_back(scalar<double>(n, *this, key));
  } else {
    out.push_back(scalar<double>(*view.node(), *this, key));
  }
  return out;
}

double CaseDocument::get_double(const std::string& key, std::optional<double> fallback) {
  return get_scalar<double>(*this, impl_->table, impl_->read, key, fallback);
}
std::int64_t CaseDocument::get_int(const std::string& key, std::optional<std::int64_t> fallback) {
  return get_scalar<std::int64_t>(*this, impl_->table, impl_->read, key, fallback);
}
bool CaseDocument::get_bool(const std::string& key, std::optional<bool> fallback) {
  return get_scalar<bool>(*this, impl_->table, impl_->read, key, fallback);
}
std::string CaseDocument::get_string(const std::string& key, std::optional<std::string> fallback) {
  return get_scalar<std::string>(*this, impl_->table, impl_->read, key, fallback);
}
std::array<double, 3> CaseDocument::get_double3(const std::string& key, std::optional<std::array<double, 3>> fallback) {
  return get_array<double, 3>(*this, impl_->table, impl_->read, key, fallback);
}
std::array<bool, 3> CaseDocument::get_bool3(const std::string& key, std::optional<std::array<bool, 3>> fallback) {
  return get_array<bool, 3>(*this, impl_->table, impl_->read, key, fallback);
}
std::array<int, 3> CaseDocument::get_int3(const std::string& key, std::optional<std::array<int, 3>> fallback) {
  std::optional<std::array<std::int64_t, 3>> fb;
  if (fallback) fb = std::array<std::int64_t, 3>{(*fallback)[0], (*fallback)[1], (*fallback)[2]};
  const auto v = get_array<std::int64_t, 3>(*this, impl_->table, impl_->read, key, fb);
  std::array<int, 3> out{};
  for (int i = 0; i < 3; ++i) {
    if (v[i] < -1'000'000'000 || v[i] > 1'000'000'000) throw error(key, "value out of range");
    out[i] = static_cast<int>(v[i]);
  }
  return out;
}

std::vector<std::string> CaseDocument::get_strings(const std::string& key,
                                                   std::optional<std::vector<std::string>> fallback) {
  toml::table holder;
  const CaseKey* row = nullptr;
  const auto* node = lookup(*this, impl_->table, impl_->read, key, {KeyType::strings}, fallback.has_value(), holder, row);
  if (!node) return *fallback;
  const auto* arr = node->as_array();
  if (!arr) throw error(key, "expected an array of strings");
  std::vector<std::string> out;
  for (const auto& n : *arr) {
    out.push_back(scalar<std::string>(n, *this, key));
    check_word(*this, *row, key, out.back());
  }
  return out;
}

std::size_t CaseDocument::count(const std::string& key) {
  auto view = impl_->table.at_path(key);
  if (!view) return 0;
  const auto* arr = view.as_array();
  if (!arr || !arr->is_array_of_tables()) throw error(key, "expected an array of tables ([[" + key + "]])");
  return arr->size();
}

void CaseDocument::mark_read(const std::string& key) { impl_->marked.insert(key); }

void CaseDocument::reject_unknown() const {
  const auto known = [&](const std::string& path) {
    if (impl_->read.count(path)) return true;
    for (const auto& m : impl_->marked)
      if (path == m || path.rfind(m + ".", 0) == 0 || path.rfind(m + "[", 0) == 0) return true;
    return false;
  };
  std::function<void(const toml::table&, const std::string&)> walk = [&](const toml::table& t, const std::string& prefix) {
    for (const auto& [k, node] : t) {
      const std::string path = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      // No Rewind key contains these; a quoted one would alias a path like "a[0].b".
      if (k.str().find_first_of("[].") != std::string_view::npos)
        throw CaseError(fmt::format("{}: unknown key '{}' (at {})", impl_->name, path, where(node.source())));
      if (known(path)) continue;
      const auto unknown = [&] {
        const auto at = where(node.source());
        if (const auto* row = find_case_key(path); row && row->type != KeyType::option)
          return CaseError(fmt::format("{}: key '{}' (at {}) has no effect in this case (`rewind keys {}` says when "
                                       "it applies)", impl_->name, path, at, path.substr(0, path.find_first_of(".["))));
        // The closest key the table declares in the same section ("did you mean").
        const auto [parent, leaf] = split_leaf(path);
        std::string best;
        for (const auto& row : case_keys()) {
          const auto candidate = (parent.empty() ? "" : parent + ".") + split_leaf(row.name).second;
          if (find_case_key(candidate) != &row || !looks_like(leaf, split_leaf(candidate).second)) continue;
          if (best.empty() || edit_distance(leaf, split_leaf(candidate).second) < edit_distance(leaf, split_leaf(best).second))
            best = candidate;
        }
        const std::string hint = best.empty() ? "" : fmt::format("; did you mean '{}'?", best);
        return CaseError(fmt::format("{}: unknown key '{}' (at {}{})", impl_->name, path, at, hint));
      };
      if (const auto* sub = node.as_table()) {
        walk(*sub, path);
      } else if (const auto* arr = node.as_array(); arr && arr->is_array_of_tables() && !arr->empty()) {
        for (std::size_t i = 0; i < arr->size(); ++i) walk(*(*arr)[i].as_table(), path + "[" + std::to_string(i) + "]");
      } else {
        throw unknown();
      }
    }
  };
  walk(impl_->table, "");
}

// ---------------------------------------------------------------------------------

bool RefineRegion::overlaps(const spacetree::Box& grid) const {
  if (radius > 0.0) {
    double d2 = 0.0;
    for (int a = 0; a < 3; ++a) {
      const double q = std::clamp(center[a], grid.lo[a], grid.hi[a]) - center[a];
      d2 += q * q;
    }
    return d2 < radius * radius;
  }
  return box.overlaps(grid);
}

TreeCase parse_tree_case(CaseDocument& doc) {
  TreeCase c;
  auto& sh = c.shape;
  sh.domain.lo = doc.get_double3("domain.lo");
  sh.domain.hi = doc.get_double3("domain.hi");
  sh.periodic = doc.get_bool3("domain.periodic");
  sh.r = doc.get_int3("tree.r");
  sh.s = doc.get_int3("tree.s");
  c.base_depth = static_cast<int>(doc.get_int("tree.depth"));
  c.balance = doc.get_bool("tree.balance");
  c.ranks = static_cast<int>(doc.get_int("run.ranks"));
  int deepest = c.base_depth;
  for (std::size_t i = 0; i < doc.count("tree.refine"); ++i) {
    const std::string p = "tree.refine[" + std::to_string(i) + "]";
    RefineRegion r;
    r.level = static_cast<int>(doc.get_int(p + ".level"));
    if (doc.has(p + ".radius")) {
      r.center = doc.get_double3(p + ".center");
      r.radius = doc.get_double(p + ".radius");
    } else {
      r.box.lo = doc.get_double3(p + ".lo");
      r.box.hi = doc.get_double3(p + ".hi");
      for (int a = 0; a < 3; ++a)
        if (r.box.hi[a] < r.box.lo[a]) throw doc.error(p + ".hi", "must not be below lo");
    }
    deepest = std::max(deepest, r.level);
    c.regions.push_back(r);
  }
  sh.max_depth = static_cast<int>(doc.get_int("tree.max_depth", deepest));
  try {
    sh.validate();
  } catch (const std::invalid_argument& e) {
    throw CaseError(fmt::format("{}: {}", doc.name(), e.what()));
  }
  if (c.base_depth > sh.max_depth)
    throw doc.error("tree.depth", fmt::format("{} exceeds tree.max_depth {}", c.base_depth, sh.max_depth));
  for (std::size_t i = 0; i < c.regions.size(); ++i)
    if (c.regions[i].level > sh.max_depth)
      throw doc.error("tree.refine[" + std::to_string(i) + "].level",
                      fmt::format("{} exceeds tree.max_depth {}", c.regions[i].level, sh.max_depth));
  return c;
}

spacetree::Tree build_tree(const TreeCase& c) {
  using spacetree::Mark;
  spacetree::Tree tree = spacetree::Tree::full(c.shape, c.base_depth);
  if (!c.regions.empty()) {
    tree.adapt_until_stable([&](spacetree::Uid uid, const spacetree::Box& box) {
      for (const auto& r : c.regions)
        if (uid.level() < r.level && r.overlaps(box)) return Mark::refine;
      return Mark::keep;
    });
  }
  if (c.balance) tree.balance();
  return tree;
}

}  // namespace rwd::config
