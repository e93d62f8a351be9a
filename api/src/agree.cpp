// Agreement before a collective acts (agree.hpp): a digest of the call's arguments and a
// failure flag in one allreduce; only when that finds a problem, more collectives to name
// the rank, the argument and the values.
#include "agree.hpp"

#include <fmt/core.h>

#include <cstring>
#include <optional>

#include "handles.hpp"

namespace rwd::api {

namespace {

constexpr std::uint64_t kFnvBasis = 14695981039346656037ULL;

std::uint64_t fnv(const void* bytes, std::size_t n, std::uint64_t h = kFnvBasis) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

std::uint64_t fnv(const std::string& s) { return fnv(s.data(), s.size()); }

void bcast_text(MPI_Comm comm, int root, std::string& text) {
  int n = static_cast<int>(text.size());
  MPI_Bcast(&n, 1, MPI_INT, root, comm);
  text.resize(static_cast<std::size_t>(n));
  MPI_Bcast(text.data(), n, MPI_CHAR, root, comm);
}

struct Difference {
  int rank;           ///< the lowest rank that differs from rank 0
  std::string first;  ///< rank 0's text
  std::string other;  ///< that rank's
};

// Collective: the lowest rank whose `hash` is not rank 0's, with both texts.
std::optional<Difference> first_difference(MPI_Comm comm, std::uint64_t hash, const std::string& text) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::uint64_t h0 = hash;
  MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, comm);
  const int mine = h0 != hash ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return std::nullopt;
  Difference d{first, text, text};
  bcast_text(comm, 0, d.first);
  bcast_text(comm, first, d.other);
  return d;
}

// Collective, once the digests differ: what differs, in one line.
std::string differences(MPI_Comm comm, const char* call, const std::vector<std::uint64_t>& hashes,
                        const std::vector<std::string>& names, const std::vector<std::string>& texts) {
  constexpr const char* kRule = "every rank must make a collective call with the same arguments; nothing was done";
  if (const auto d = first_difference(comm, fnv(std::string(call)), call))
    return fmt::format("{}: the ranks are in different calls: rank 0 in {}, rank {} in {} ({})", call, d->first,
                       d->rank, d->other, kRule);
  int n = static_cast<int>(hashes.size()), common = n;
  MPI_Allreduce(&n, &common, 1, MPI_INT, MPI_MIN, comm);
  for (std::size_t i = 0; i < static_cast<std::size_t>(common); ++i)
    if (const auto d = first_difference(comm, hashes[i], texts[i]))
      return fmt::format("{}: rank {} passes {} = {}, rank 0 {} ({})", call, d->rank, names[i], d->other, d->first,
                         kRule);
  return fmt::format("{}: the ranks pass different arguments ({})", call, kRule);
}

std::string shortened(std::string s) {
  constexpr std::size_t kMax = 80;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

}  // namespace

void Call::add(const char* name, const void* bytes, std::size_t n, std::string text) {
  const std::uint64_t h = fnv(bytes, n, fnv(name, std::strlen(name) + 1));
  args_.push_back({name, h, std::move(text)});
}

Call& Call::arg(const char* name, std::int64_t v) {
  add(name, &v, sizeof v, fmt::format("{}", v));
  return *this;
}

Call& Call::arg(const char* name, double v) {
  add(name, &v, sizeof v, fmt::format("{}", v));  // the shortest text that reads back to v
  return *this;
}

Call& Call::arg(const char* name, const std::string& v) {
  add(name, v.data(), v.size(), shortened(fmt::format("\"{}\"", v)));
  return *this;
}

Call& Call::arg(const char* name, const std::vector<int>& v) {
  std::string text;
  for (const int x : v) text += fmt::format("{}{}", text.empty() ? "" : ", ", x);
  add(name, v.data(), v.size() * sizeof(int), shortened("[" + text + "]"));
  return *this;
}

Call& Call::arg(const char* name, const std::vector<double>& v) {
  std::string text;
  for (const double x : v) text += fmt::format("{}{}", text.empty() ? "" : ", ", x);
  add(name, v.data(), v.size() * sizeof(double), shortened("[" + text + "]"));
  return *this;
}

void Call::failed(std::exception_ptr e) noexcept {
  status_ = guarded([&] { std::rethrow_exception(e); });
  problem_ = rewind_last_error();
}

bool agree(MPI_Comm comm, const Call& call, bool flag) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(call.args_.size());
  std::uint64_t digest = fnv(std::string(call.name_));
  for (const auto& a : call.args_) {
    hashes.push_back(a.hash);
    digest = fnv(&a.hash, sizeof a.hash, digest);
  }
  const std::uint64_t mine[3] = {digest, ~digest, (call.status_ != 0 ? 1U : 0U) | (flag ? 2U : 0U)};
  std::uint64_t all[3] = {0, 0, 0};
  MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, comm);
  if ((all[2] & 1U) != 0) agree_problem(comm, call.name_, call.status_, call.problem_);
  if (all[0] != ~all[1]) {  // max != min: some rank's digest differs
    std::vector<std::string> names, texts;
    for (const auto& a : call.args_) {
      names.emplace_back(a.name);
      texts.push_back(a.text);
    }
    throw Status(REWIND_ERR_ARGUMENT, differences(comm, call.name_, hashes, names, texts));
  }
  return (all[2] & 2U) != 0;
}

void agree_problem(MPI_Comm comm, const char* call, int status, const std::string& problem, bool name_rank) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = problem.empty() ? size : rank;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int st = status;
  MPI_Bcast(&st, 1, MPI_INT, first, comm);
  std::string text = problem;
  bcast_text(comm, first, text);
  throw Status(st, size > 1 && name_rank ? fmt::format("{}: rank {}: {}", call, first, text)
                                         : fmt::format("{}: {}", call, text));
}

}  // namespace rwd::api
