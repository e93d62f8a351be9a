#include "rewind/insitu/hook.hpp"

#include <dlfcn.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <vector>

#include "rewind/insitu.h"

namespace rwd::insitu {

static_assert(sizeof(MPI_Fint) == sizeof(std::int32_t), "the ABI passes communicators as 32-bit Fortran handles");

namespace {

constexpr int kErrorSize = 1024;

// One line: a hook's message may hold newlines (a Python traceback); the report is
// one line whatever the hook wrote.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > 400) s = s.substr(0, 397) + "...";
  return s.empty() ? "failed without a message" : s;
}

// Runs one entry point; a non-zero return or an exception becomes the error text.
template <class F>
std::string guarded(F&& call) {
  std::array<char, kErrorSize> error{};
  try {
    if (call(error.data(), kErrorSize) == 0) return {};
    error.back() = '\0';
    return one_line(error.data());
  } catch (const std::exception& e) {
    return one_line(fmt::format("threw: {}", e.what()));
  } catch (...) {
    return "threw an exception that is not a std::exception";
  }
}

// Every rank learns whether any failed; the lowest failing rank's message is sent to
// all, so the outcome (and what the caller reports) is the same everywhere.
Outcome agree(const std::string& local_error, MPI_Comm comm, const std::string& what) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int failed = local_error.empty() ? 0 : 1;
  std::vector<int> flags(static_cast<std::size_t>(size), 0);
  MPI_Allgather(&failed, 1, MPI_INT, flags.data(), 1, MPI_INT, comm);
  const auto first = std::find(flags.begin(), flags.end(), 1);
  if (first == flags.end()) return {};
  const int root = static_cast<int>(first - flags.begin());
  const auto count = std::count(flags.begin(), flags.end(), 1);
  std::string msg = rank == root ? local_error : std::string();
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  msg.resize(static_cast<std::size_t>(len));
  MPI_Bcast(msg.data(), len, MPI_CHAR, root, comm);
  const std::string where = size == 1 ? "" : fmt::format(" (on {} of {} ranks, first rank {})", count, size, root);
  return {false, fmt::format("{}: {}{}", what, msg, where)};
}

std::int32_t fortran_handle(MPI_Comm comm) { return static_cast<std::int32_t>(MPI_Comm_c2f(comm)); }

}  // namespace

struct Hook::Impl {
  std::string library;
  void* handle = nullptr;
  rewind_insitu_init_fn init = nullptr;
  rewind_insitu_step_fn step = nullptr;
  rewind_insitu_finalize_fn finalize = nullptr;
  bool initialised = false, finalised = false, enabled = true;
  // Per call, reused: the C structs that point into the caller's grids.
  std::vector<rewind_insitu_grid> grids;
  std::vector<const double*> arrays;
  std::vector<const char*> names;

  ~Impl() {
    if (handle) dlclose(handle);  // RTLD_NODELETE: the code stays mapped
  }
};

Hook::Hook(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Hook::Hook(Hook&&) noexcept = default;
Hook& Hook::operator=(Hook&&) noexcept = default;
Hook::~Hook() = default;

const std::string& Hook::library() const { return impl_->library; }
bool Hook::enabled() const { return impl_->enabled; }

Hook Hook::load(const std::string& library) {
  if (library.find('/') != std::string::npos && !std::filesystem::exists(library))
    throw HookError(fmt::format("in-situ library '{}' does not exist", library));
  auto impl = std::make_unique<Impl>();
  impl->library = library;
  dlerror();
  impl->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!impl->handle) {
    const char* e = dlerror();
    throw HookError(fmt::format("cannot load in-situ library '{}': {}", library, e ? one_line(e) : "unknown error"));
  }
  const auto symbol = [&](const char* name) {
    dlerror();
    void* p = dlsym(impl->handle, name);
    if (!p)
      throw HookError(fmt::format("'{}' is not a Rewind in-situ hook: it has no symbol '{}' (see rewind/insitu.h)",
                                  library, name));
    return p;
  };
  const auto version = reinterpret_cast<rewind_insitu_abi_version_fn>(symbol("rewind_insitu_abi_version"));
  impl->init = reinterpret_cast<rewind_insitu_init_fn>(symbol("rewind_insitu_init"));
  impl->step = reinterpret_cast<rewind_insitu_step_fn>(symbol("rewind_insitu_step"));
  impl->finalize = reinterpret_cast<rewind_insitu_finalize_fn>(symbol("rewind_insitu_finalize"));
  if (const int v = version(); v < REWIND_INSITU_ABI_OLDEST || v > REWIND_INSITU_ABI_VERSION)
    throw HookError(fmt::format("in-situ library '{}' was built for hook ABI version {}, this rewind loads versions "
                                "{} to {} (rebuild it against rewind/insitu.h)",
                                library, v, REWIND_INSITU_ABI_OLDEST, REWIND_INSITU_ABI_VERSION));
  return Hook(std::move(impl));
}

Outcome Hook::init(const InitArgs& args, const kernel::CommonInfo& common, int halo, MPI_Comm comm) {
  auto& im = *impl_;
  if (!im.enabled || im.initialised) return {};
  rewind_insitu_init_info info{};
  info.abi_version = REWIND_INSITU_ABI_VERSION;
  info.comm = fortran_handle(comm);
  info.args = args.args.c_str();
  info.case_name = args.case_name.c_str();
  info.every = args.every;
  info.dim = common.dim;
  info.block[0] = common.block.sx;
  info.block[1] = common.block.sy;
  info.block[2] = common.block.sz;
  info.halo = halo;
  std::copy(common.domain.begin(), common.domain.end(), info.domain);
  auto out = agree(guarded([&](char* e, int n) { return im.init(&info, e, n); }), comm, "rewind_insitu_init");
  im.initialised = out.ok;
  im.enabled = out.ok;
  return out;
}

Outcome Hook::step(const kernel::CommonInfo& common, const kernel::StepInfo& step, const kernel::LocalGrids& grids,
                   MPI_Comm comm, const std::string& file) {
  auto& im = *impl_;
  if (!im.enabled || !im.initialised) return {};
  const auto nvars = step.fields.size();
  im.names.clear();
  for (const auto& f : step.fields) im.names.push_back(f.name.c_str());
  im.arrays.assign(grids.grids.size() * nvars, nullptr);
  im.grids.assign(grids.grids.size(), rewind_insitu_grid{});
  for (std::size_t g = 0; g < grids.grids.size(); ++g) {
    const auto& rec = grids.grids[g];
    auto& out = im.grids[g];
    out.uid = rec.uid;
    out.level = rec.level;
    out.is_leaf = rec.child_uids.empty() ? 1 : 0;
    std::copy(rec.bbox.begin(), rec.bbox.end(), out.bbox);
    for (std::size_t v = 0; v < nvars; ++v)
      im.arrays[g * nvars + v] = rec.fields.at(static_cast<std::size_t>(step.fields[v].slot));
    out.fields = im.arrays.data() + g * nvars;
    out.cell_type = rec.cell_type;
  }
  rewind_insitu_step_desc s{};
  s.abi_version = REWIND_INSITU_ABI_VERSION;
  s.comm = fortran_handle(comm);
  s.step = step.step;
  s.time = step.time;
  s.dt = step.dt;
  s.dim = common.dim;
  s.block[0] = grids.block.sx;
  s.block[1] = grids.block.sy;
  s.block[2] = grids.block.sz;
  s.halo = grids.halo;
  s.n_variables = static_cast<std::int32_t>(nvars);
  s.variables = im.names.data();
  s.n_grids = static_cast<std::int64_t>(im.grids.size());
  s.grids = im.grids.data();
  s.file = file.c_str();
  auto out = agree(guarded([&](char* e, int n) { return im.step(&s, e, n); }), comm,
                   fmt::format("step {}", step.step));
  if (!out.ok) im.enabled = false;
  return out;
}

Outcome Hook::finalize(MPI_Comm comm) {
  auto& im = *impl_;
  if (!im.initialised || im.finalised) return {};
  im.finalised = true;
  im.enabled = false;
  return agree(guarded([&](char* e, int n) { return im.finalize(e, n); }), comm, "rewind_insitu_finalize");
}

}  // namespace rwd::insitu
