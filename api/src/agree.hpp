// Ranks agree before a collective acts: on a failure (the lowest failing rank's message,
// thrown on every rank) and on the call's scalar arguments (bit-identical on every rank).
// Private to the C API.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rwd::api {

/// Collective. If `problem` is non-empty on any rank of `comm`, every rank throws
/// std::invalid_argument with the message of the lowest such rank.
inline void agree_or_throw(MPI_Comm comm, const std::string& problem) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int mine = problem.empty() ? size : rank;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int length = rank == first ? static_cast<int>(problem.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::string text = rank == first ? problem : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
  throw std::invalid_argument(text);
}

/// One collective call as this rank makes it: its name, its scalar arguments (which every
/// rank must pass bit for bit alike) and this rank's own verdict on them (check()).
class Call {
 public:
  explicit Call(const char* name) : name_(name) {}
  Call& arg(const char* name, std::int64_t v);
  Call& arg(const char* name, double v);  ///< compared bit for bit: 0.1 and its neighbour differ
  Call& arg(const char* name, const std::string& v);
  Call& arg(const char* name, const std::vector<int>& v);
  Call& arg(const char* name, const std::vector<double>& v);  ///< bit for bit, as a double
  /// Runs this rank's checks: what `f` throws becomes this rank's failure (its status and
  /// message), agreed by agree(); the first failure counts.
  template <class F>
  void check(F&& f) noexcept {
    if (status_ != 0) return;
    try {
      f();
    } catch (...) {
      failed(std::current_exception());
    }
  }
  [[nodiscard]] const char* name() const { return name_; }

 private:
  friend bool agree(MPI_Comm comm, const Call& call, bool flag);
  struct Arg {
    const char* name;
    std::uint64_t hash;
    std::string text;
  };
  void add(const char* name, const void* bytes, std::size_t n, std::string text);
  void failed(std::exception_ptr e) noexcept;
  const char* name_;
  std::vector<Arg> args_;
  int status_ = 0;
  std::string problem_;
};

/// Collective over `comm`, before the call acts: one allreduce decides for every rank.
/// If any rank's checks failed, every rank throws Status with the lowest such rank's
/// status and message ("rank R: ..."); if the ranks' arguments differ (or they are in
/// different calls), every rank throws Status(REWIND_ERR_ARGUMENT) naming the first
/// argument that differs, the values and the ranks. Otherwise returns whether `flag` was
/// set on any rank (it rides on the same reduction). The failure path costs a few more
/// collectives; the common one, one allreduce of three words.
bool agree(MPI_Comm comm, const Call& call, bool flag = false);

/// Collective: agree() for a problem found after the arguments were agreed (""
/// = none): the lowest failing rank's message, prefixed by the call and (`name_rank`, on
/// more than one rank) that rank, thrown as Status(status) on every rank.
void agree_problem(MPI_Comm comm, const char* call, int status, const std::string& problem, bool name_rank = true);

}  // namespace rwd::api
