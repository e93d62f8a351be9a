// An owned MPI communicator and the one MPI error check, shared by every module that
// talks MPI (kernel, forest, neighbourhood server, launch model). Header-only, C++17.
#pragma once
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace rwd::mpi {

/// Throws std::runtime_error("WHO: WHAT failed: <MPI's error string>") unless `rc` is
/// MPI_SUCCESS. Only meaningful under MPI_ERRORS_RETURN; with MPI's default handler an
/// error aborts before this runs.
inline void check(int rc, const char* who, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw std::runtime_error(std::string(who) + ": " + what + " failed: " + std::string(msg, static_cast<std::size_t>(len)));
}

/// A communicator this object owns: freed when it goes, unless MPI is already finalised
/// (objects that outlive MPI_Finalize, e.g. statics, must not call MPI). Move-only.
/// Converts to MPI_Comm, so it goes wherever MPI takes a communicator.
class Comm {
 public:
  Comm() = default;
  /// Takes ownership of `owned` (never MPI_COMM_WORLD or MPI_COMM_SELF).
  explicit Comm(MPI_Comm owned) : comm_(owned) {}
  Comm(Comm&& o) noexcept : comm_(std::exchange(o.comm_, MPI_COMM_NULL)) {}
  Comm& operator=(Comm&& o) noexcept {
    if (this != &o) {
      reset();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    }
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { reset(); }

  /// Collective over `c`: a duplicate of `c`, owned. `who` names the caller in errors.
  static Comm dup(MPI_Comm c, const char* who) {
    Comm out;
    check(MPI_Comm_dup(c, &out.comm_), who, "MPI_Comm_dup");
    return out;
  }
  /// Collective over `c`: MPI_Comm_split; MPI_UNDEFINED colours get an empty Comm.
  static Comm split(MPI_Comm c, int colour, int key, const char* who) {
    Comm out;
    check(MPI_Comm_split(c, colour, key, &out.comm_), who, "MPI_Comm_split");
    return out;
  }
  /// Collective over `c`: the ranks sharing this one's node (MPI_COMM_TYPE_SHARED).
  static Comm split_shared(MPI_Comm c, const char* who) {
    Comm out;
    check(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out.comm_), who, "MPI_Comm_split_type");
    return out;
  }

  operator MPI_Comm() const { return comm_; }  // NOLINT(google-explicit-constructor): a handle
  MPI_Comm get() const { return comm_; }
  bool valid() const { return comm_ != MPI_COMM_NULL; }
  int rank() const {
    int r = -1;
    if (valid()) MPI_Comm_rank(comm_, &r);
    return r;
  }
  int size() const {
    int s = 0;
    if (valid()) MPI_Comm_size(comm_, &s);
    return s;
  }

  /// Frees the communicator now (not collective in MPI's sense, but every rank of it
  /// should do so at a matching point); safe after MPI_Finalize and on an empty Comm.
  void reset() {
    if (comm_ == MPI_COMM_NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace rwd::mpi
