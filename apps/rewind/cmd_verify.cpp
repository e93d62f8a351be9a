// `rewind verify FILE[@STEP]`: check every row of every dataset of a file's committed
// steps (or of one step) against the checksums stored with it (format 1.4).
//
// Exit 0 when every checksum matches, 1 when a row does not (each named: step, dataset,
// grid row), 2 on an error (a missing file or step), as `diff` does. A step without
// checksums (written before format 1.4 or with checksums = false) is reported as not
// verified and does not change the exit code. Serial and read-only.
#include <fmt/core.h>

#include <memory>

#include "commands.hpp"
#include "rewind/kernel/error.hpp"
#include "rewind/kernel/reader.hpp"

namespace rwd::cli {
namespace {

namespace k = rwd::kernel;

struct VerifyOptions {
  std::string spec;
  bool quiet = false;
};

int run_verify(const VerifyOptions& o) {
  const auto [file, sel] = k::split_step_spec(o.spec);
  const k::Reader reader = k::Reader::open(file);
  std::vector<k::StepEntry> steps;
  if (o.spec.find('@') == std::string::npos) {
    steps = reader.steps();
  } else {
    steps.push_back(reader.find_step(sel));
  }
  if (const auto missing = reader.bytes_missing(); missing > 0)
    fmt::print("{}: truncated: {} byte{} short of its end; the steps that reach into it are damaged, the others "
               "read as ever\n",
               file, missing, missing == 1 ? "" : "s");
  std::int64_t bad_steps = 0, unverified = 0, rows = 0;
  for (const auto& e : steps) {
    k::Reader::Verification v;
    try {
      v = reader.verify_step(e.step);
    } catch (const k::FileError& err) {  // its metadata cannot be read (a truncated file): name it, go on
      ++bad_steps;
      fmt::print("step {:>8}  t = {:<12.6g} DAMAGED {}\n", e.step, e.time, err.what());
      continue;
    }
    rows += v.rows;
    if (v.datasets == 0) {
      ++unverified;
      if (!o.quiet) fmt::print("step {:>8}  t = {:<12.6g} no checksums (not verified)\n", e.step, e.time);
    } else if (v.problems.empty()) {
      if (!o.quiet) fmt::print("step {:>8}  t = {:<12.6g} ok: {} rows of {} datasets\n", e.step, e.time, v.rows, v.datasets);
    } else {
      ++bad_steps;
      for (const auto& p : v.problems) fmt::print("step {:>8}  t = {:<12.6g} CORRUPT {}\n", e.step, e.time, p);
    }
  }
  const auto verified = static_cast<std::int64_t>(steps.size()) - unverified;
  if (bad_steps > 0) {
    fmt::print("{}: {} of {} verified steps corrupt\n", file, bad_steps, verified);
    return 1;
  }
  if (!o.quiet)
    fmt::print("{}: {} {} verified ({} rows){}\n", file, verified, verified == 1 ? "step" : "steps", rows,
               unverified > 0 ? fmt::format(", {} without checksums", unverified) : "");
  return 0;
}

const Registration reg{Command{
    "verify", "Check a file's steps against their stored checksums (exit 0 ok, 1 corrupt, 2 error)", false,
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<VerifyOptions>();
      sub.add_option("file", o->spec, "FILE[@STEP]: every committed step, or one (latest, N, #i or t=T)")->required();
      sub.add_flag("-q,--quiet", o->quiet, "Print only corrupt rows");
      return [o] { return run_verify(*o); };
    },
    42, 2}};

}  // namespace
}  // namespace rwd::cli
