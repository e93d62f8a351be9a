// A full disk (ENOSPC) at every phase of a step, under every strategy: each rank gets one
// FileError(no_space) naming the step and the cause, the file keeps exactly its committed
// steps (the failed step's group is gone, its number free), and the file continues in
// place (Writer::append) into the same steps as a file that never met a full disk. The
// fault is WriterEnv::on_phase throwing std::system_error(ENOSPC) inside the phase, as a
// failed write there would; dedicated I/O ranks get the hook through serve_io_ranks.
#include <catch2/catch.hpp>
#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <tuple>

#include <sys/stat.h>

#include "mpi_test_util.hpp"
#include "toy_tree.hpp"

using namespace rwd::kernel;
using rwd::kernel::test::DedicatedLayout;
using rwd::kernel::test::ToyModel;

namespace {
constexpr double kDt = 0.01;

StepInfo step_info(int i) { return ToyModel::checkpoint_step(i, i * kDt, kDt); }

/// Throws ENOSPC the second time `phase` comes (the second step's), on the ranks it is called on.
std::function<void(const char*)> full_at(const std::string& phase) {
  auto seen = std::make_shared<int>(0);
  return [phase, seen](const char* ph) {
    if (phase == ph && ++*seen == 2) throw std::system_error(ENOSPC, std::generic_category(), "pwrite");
  };
}

/// What a user sees of a file: every step group (committed or not) and its rows' uids.
std::string summary(const std::string& path) {
  Reader r = Reader::open(path);
  std::string s;
  for (const auto& e : r.steps(false)) {
    s += std::to_string(e.step) + (e.committed ? "c:" : "u:");
    for (auto uid : r.read_topology(e.step).uid) s += std::to_string(uid) + ",";
    s += r.verify_step(e.step).problems.empty() ? "|" : "CORRUPT|";
  }
  return s;
}

/// Writes steps 1 and 2 through `comm`; returns the error step 2 gave (at its write or at
/// close: a step handed off reports at the next call), or "" if none.
std::string write_two(MPI_Comm comm, const std::string& path, const IoOptions& opt, const WriterEnv& env,
                      ErrorKind* kind) {
  ToyModel m = ToyModel::build(comm);
  Writer w = Writer::create(comm, path, ToyModel::common(), opt, env);
  try {
    for (int i = 1; i <= 2; ++i) {
      m.advance(kDt);
      w.write_step(step_info(i), m.describe());
    }
    w.close();
  } catch (const FileError& e) {
    *kind = e.kind();
    return e.what();
  }
  return "";
}

/// Continues the file with step 2 again, as `rewind run --restart` does after a full disk.
void continue_with_step_two(MPI_Comm comm, const std::string& path, const IoOptions& opt, const WriterEnv& env = {}) {
  ToyModel m = ToyModel::build(comm);
  m.advance(kDt);
  m.advance(kDt);
  Writer w = Writer::append(comm, path, opt, env);
  CHECK(w.last_step() == 1);
  w.write_step(step_info(2), m.describe());
  w.close();
}

/// After step 2 met the full disk: one line naming the step and the cause on every rank;
/// the file holds step 1 only, not even an uncommitted 2 (`whole`: summary() of both).
void check_step_two_failed(const std::string& error, ErrorKind kind, const std::string& path,
                           const std::string& whole) {
  INFO(error);
  CHECK(rwd::test::all_ranks(kind == ErrorKind::no_space));
  CHECK(error.find("step 2 (t = 0.02) not written") != std::string::npos);
  CHECK(error.find("No space left on device") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(summary(path) == whole.substr(0, whole.find('|') + 1));
  MPI_Barrier(MPI_COMM_WORLD);
}

const char* const kStepPhases[] = {"data", "checksums", "commit", "index"};

/// summary() of steps 1 and 2 written by every rank with no fault: what each case must end as.
std::string reference(const std::string& name) {
  IoOptions opt;
  opt.write_views = false;
  const std::string path = rwd::kernel::test::test_path(name);
  ErrorKind kind{};
  REQUIRE(write_two(MPI_COMM_WORLD, path, opt, {}, &kind).empty());
  return summary(path);
}
}  // namespace

TEST_CASE("a full disk in a step's data, checksums or commit: one line naming the step and the cause; the file "
          "keeps its committed steps and continues",
          "[kernel][mpi]") {
  const std::string whole = reference("full_ref");
  IoOptions base;
  base.write_views = false;
  ErrorKind kind{};
  for (const char* strategy : {"collective", "independent", "auto", "aggregated"})
    for (const char* phase : kStepPhases) {
      DYNAMIC_SECTION(strategy << ", full at " << phase) {
        IoOptions opt = base;
        set_option(opt, "strategy", std::string(strategy));
        WriterEnv env;
        env.on_phase = full_at(phase);
        const std::string path = rwd::kernel::test::test_path(std::string("full_") + strategy + "_" + phase);
        kind = ErrorKind::invalid_argument;
        const std::string error = write_two(MPI_COMM_WORLD, path, opt, env, &kind);
        check_step_two_failed(error, kind, path, whole);
        continue_with_step_two(MPI_COMM_WORLD, path, opt);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(summary(path) == whole);
      }
    }
}

TEST_CASE("a full disk on dedicated I/O ranks: the compute ranks get it naming the step; the file continues",
          "[kernel][mpi]") {
  if (rwd::test::world_size() < 2) {  // no I/O rank at one process: refused, naming the cure
    CHECK_THAT(rwd::kernel::test::dedicated_alone_error("full_disk_alone"), Catch::Contains("needs I/O ranks"));
    return;
  }
  const std::string whole = reference("full_dedicated_ref");
  IoOptions base;
  base.write_views = false;
  ErrorKind kind{};
  for (const char* phase : kStepPhases) {
    DYNAMIC_SECTION("dedicated, full at " << phase) {
      DedicatedLayout lay;
      const std::string path = rwd::kernel::test::test_path(std::string("full_dedicated_") + phase);
      if (lay.is_io) {
        serve_io_ranks(lay.group, lay.io, nullptr, full_at(phase));  // the first file: full at step 2
        serve_io_ranks(lay.group, lay.io);                           // the continuation
      } else {
        IoOptions opt = base;
        opt.strategy = Strategy::dedicated;
        const WriterEnv env{lay.group, {}};
        kind = ErrorKind::invalid_argument;
        const std::string error = write_two(lay.compute, path, opt, env, &kind);
        INFO(error);
        CHECK(kind == ErrorKind::no_space);
        CHECK(error.find("step 2 (t = 0.02) not written by the I/O ranks") != std::string::npos);
        CHECK(error.find("No space left on device") != std::string::npos);
        release_io_ranks(lay.group);
        continue_with_step_two(lay.compute, path, opt, env);
        release_io_ranks(lay.group);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      CHECK(summary(path) == whole);
    }
  }
}

TEST_CASE("a full disk in a view or the branch registry costs the step nothing and leaves no cut file", "[kernel][mpi]") {
  const std::string path = rwd::kernel::test::test_path("full_view");
  WriterEnv env;
  env.on_phase = full_at("view");
  ToyModel m = ToyModel::build(MPI_COMM_WORLD);
  {
    Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(), {}, env);
    std::string view_errors;
    for (int i = 1; i <= 3; ++i) {
      m.advance(kDt);
      view_errors += w.write_step(step_info(i), m.describe()).view_error + ";";
    }
    w.close();
    if (rwd::test::world_rank() == 0) {
      CHECK(view_errors == ";pwrite: No space left on device;;");  // step 2's view only, named
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Reader r = Reader::open(path);
  CHECK(r.steps(true).size() == 3);  // the step of the failed view is committed
  const std::string views = path.substr(0, path.size() - 3) + ".views/";
  const std::string stem = path.substr(0, path.size() - 3);
  CHECK_FALSE(std::ifstream(views + "step_00000002.hdf").good());
  CHECK_FALSE(std::ifstream(views + "step_00000002.hdf.tmp").good());  // no cut file left
  CHECK(std::ifstream(views + "step_00000003.hdf").good());           // later views are written
  std::ifstream series(views + stem + ".hdf.series");
  const std::string text((std::istreambuf_iterator<char>(series)), std::istreambuf_iterator<char>());
  CHECK(text.find("step_00000003.hdf") != std::string::npos);
  CHECK(text.find("step_00000002.hdf") == std::string::npos);

  // A branch whose line in the parent's registry cannot be written: the branch is
  // written, the registry keeps what it had.
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string registry = branch_registry(path);
  if (rwd::test::world_rank() == 0) std::ofstream(registry) << "earlier.h5\n";
  MPI_Barrier(MPI_COMM_WORLD);
  IoOptions bopt;
  bopt.write_views = false;
  WriterEnv benv;
  benv.on_phase = [](const char* ph) {
    if (std::string(ph) == "registry") throw std::system_error(ENOSPC, std::generic_category(), "write");
  };
  const std::string branch = rwd::kernel::test::test_path("full_view_branch");
  {
    Writer w = Writer::create(MPI_COMM_WORLD, branch, make_branch_common(r, 3, {"nu=2"}), bopt, benv);
    w.write_step(step_info(4), m.describe());
    w.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::ifstream in(registry);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "earlier.h5\n");
  CHECK(Reader::open(branch).steps(true).size() == 1);
}

namespace {
/// The bytes a file takes on its file system (its allocated blocks).
std::int64_t on_disk(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_blocks) * 512 : -1;
}

/// Step i of a compressed file: zfp compresses visualisation steps only.
StepInfo compressed_step(int i, Codec codec) {
  return codec == Codec::zfp ? ToyModel::visual_step(i, i * kDt, kDt, false, true) : step_info(i);
}

IoOptions compressed_options(Codec codec, const char* strategy) {
  IoOptions opt;
  opt.write_views = false;
  opt.chunk_grids = 8;
  if (codec == Codec::zfp) {
    opt.visualisation_compression = Codec::zfp;
    opt.zfp_accuracy = 1e-12;  // chunks of many pages: what is given back shows
  } else {
    opt.compression = codec;
  }
  set_option(opt, "strategy", std::string(strategy));
  return opt;
}

/// Steps 1 and 2 of a model large enough that a step's bytes stand out; the error step 2
/// gave, or "" (then `stored` is step 2's bytes on disk).
std::string write_two_compressed(const std::string& path, const IoOptions& opt, Codec codec, const WriterEnv& env,
                                 ErrorKind* kind, std::int64_t* stored = nullptr) {
  ToyModel m = ToyModel::build(MPI_COMM_WORLD, 8);
  Writer w = Writer::create(MPI_COMM_WORLD, path, ToyModel::common(8), opt, env);
  try {
    for (int i = 1; i <= 2; ++i) {
      m.advance(kDt);
      const WriteStats st = w.write_step(compressed_step(i, codec), m.describe());
      if (stored) *stored = st.stored_bytes;
    }
    w.close();
  } catch (const FileError& e) {
    *kind = e.kind();
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE(
    "a full disk in a compressed step: the file keeps its committed steps, the step's bytes are given back, "
    "and it continues",
    "[kernel][mpi]") {
  ErrorKind kind{};
  for (const Codec codec : {Codec::deflate, Codec::lz4, Codec::bitshuffle, Codec::zfp})
    for (const char* strategy : {"collective", "auto", "aggregated"}) {  // independent: refused with a filter
      const IoOptions opt = compressed_options(codec, strategy);
      const std::string name = std::string("fullz_") + to_string(codec) + "_" + strategy;
      for (const char* phase : {"room", "commit"}) {
        DYNAMIC_SECTION(to_string(codec) << ", " << strategy << ", full at " << phase) {
          // The same steps never meeting a full disk: what they are and take (written once).
          static std::map<std::string, std::tuple<std::string, std::int64_t, std::int64_t>> refs;
          if (refs.count(name) == 0) {
            std::int64_t stored = 0;
            const std::string ref = rwd::kernel::test::test_path(name + "_ref");
            REQUIRE(write_two_compressed(ref, opt, codec, {}, &kind, &stored).empty());
            MPI_Barrier(MPI_COMM_WORLD);
            refs[name] = {summary(ref), on_disk(ref), stored};
          }
          const auto& [whole, ref_bytes, stored] = refs[name];
          WriterEnv env;
          env.on_phase = full_at(phase);
          const std::string path = rwd::kernel::test::test_path(name + "_" + phase);
          kind = ErrorKind::invalid_argument;
          const std::string error = write_two_compressed(path, opt, codec, env, &kind);
          check_step_two_failed(error, kind, path, whole);
          // The failed step's compressed chunks went back to the file system too (but the
          // ends of chunks in pages they share).
          INFO("on disk " << on_disk(path) << " B, with step 2 " << ref_bytes << " B, step 2 stored " << stored
                          << " B");
          CHECK(ref_bytes - on_disk(path) > stored / 3);
          MPI_Barrier(MPI_COMM_WORLD);
          {
            ToyModel m = ToyModel::build(MPI_COMM_WORLD, 8);
            m.advance(kDt);
            m.advance(kDt);
            Writer w = Writer::append(MPI_COMM_WORLD, path, opt);
            CHECK(w.last_step() == 1);
            w.write_step(compressed_step(2, codec), m.describe());
            w.close();
          }
          MPI_Barrier(MPI_COMM_WORLD);
          CHECK(summary(path) == whole);
        }
      }
    }
}
