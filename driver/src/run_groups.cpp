// Futures on groups of compute ranks (run.hpp, "Futures"; run_impl.hpp): the rounds of a
// job whose futures compute side by side, and the groups a fork puts its futures on.
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "run_impl.hpp"

namespace rwd::driver {

void Run::check_fork(std::size_t n) const {
  const auto& l = impl_->lanes[impl_->cur];
  const auto g = static_cast<std::size_t>(l.group->size);
  if (n <= g || l.spec.insitu.enabled()) return;
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const auto need = static_cast<std::size_t>(world) + n - g;
  throw std::invalid_argument(fmt::format(
      "{} futures need {} compute ranks, one group each; {} computes on {}: start the run on {} or more processes "
      "(mpiexec -n {}), or fork fewer futures",
      n, n, l.spec.output.file.empty() ? std::string("this run") : l.spec.output.file, g, need, need));
}

std::vector<std::shared_ptr<Group>> Run::Impl::groups_for(std::size_t n) {
  const auto g = lane().group;
  // An in-situ hook is initialised once on the job's ranks and its every call is collective
  // over them (docs/insitu.md): its futures share the ranks, stepped in turn.
  if (n < 2 || lane().spec.insitu.enabled()) return std::vector<std::shared_ptr<Group>>(n, g);
  if (n > static_cast<std::size_t>(g->size)) throw std::logic_error("Run::fork: more futures than ranks (check_fork)");
  if (!job_tree) job_tree = gather_job_tree(whole->plan, comm);  // every rank of the job forks
  return split_group(*g, n, *job_tree, rank);
}

// One round of a grouped job. First every rank takes the turns of the futures it computes
// (a step and its group's observers: output, monitors, progress), side by side with the
// other groups; then their word goes to every rank, and every rank meets at each future's
// boundary for the job-wide observers (the live link: windows, steering, forks). Returns
// whether any future moved.
bool Run::Impl::grouped_round(Run& run, RunSummary& sum) {
  for (std::size_t k = 0; k < lanes.size(); ++k) {
    auto& l = lanes[k];
    l.word.event = 0;
    if (l.ended || !l.member()) continue;
    cur = at = k;
    local_turn(run, l, sum);
  }
  std::vector<LaneWord> mine;
  std::vector<bool> member;
  for (auto& l : lanes) {
    if (l.member() && l.solver) {
      const auto st = l.solver->scalar_state();
      l.word.step = static_cast<double>(st.step);
      l.word.time = st.time;
      l.word.finished = l.solver->finished() ? 1 : 0;
      l.word.written = static_cast<double>(l.output ? l.output->last_written_step() : -1);
    }
    mine.push_back(l.word);
    member.push_back(l.member());
  }
  const auto words = share_lanes(mine, member, comm);
  bool moved = false;
  for (std::size_t k = 0; k < lanes.size(); ++k) {
    lanes[k].word = words[k];
    moved = moved || words[k].event != 0;
  }
  for (std::size_t k = 0; k < lanes.size(); k = at + 1) {
    cur = at = k;
    if (lanes[k].word.event != 0) job_turn(run, k);
  }
  return moved;
}

// A future's turn on its own ranks: its first boundary, a step, or its end, with the
// observers that belong to its ranks.
void Run::Impl::local_turn(Run& run, Lane& l, RunSummary& sum) {
  const auto local = [&](const Boundary& b) {
    for (auto* o : observers)
      if (!o->job_wide()) o->at_boundary(run, b);
    schedule();
  };
  if (l.fresh) {
    l.fresh = false;
    l.started = Clock::now();
    l.word.event = 1;
    l.last.reset();
    local(Boundary{.first = true, .step = std::nullopt});
  } else if (l.paused) {
    return;
  } else if (!l.stop && !l.solver->finished()) {
    const auto info = l.solver->step();
    ++l.steps;
    ++sum.steps;
    sum.pressure_cycles += info.pressure.cycles;
    l.last = info;
    l.word.event = 2;
    local(Boundary{.first = false, .step = info});
  } else {
    // Its end (stopped at another future's boundary: its final checkpoint now, as its own
    // boundary would have written it).
    if (l.stop && l.output) l.output->after_step(*l.solver, false, true);
    sum.stopped = sum.stopped || l.stop;
    l.word.event = 3;
    for (auto o = observers.rbegin(); o != observers.rend(); ++o)
      if (!(*o)->job_wide()) (*o)->at_end(run);
  }
}

// Future k's boundary (or end) for the job-wide observers, on every rank of the job. One
// of them may steer: a fork replaces the future (its boundary ends there), a later end
// time continues it.
void Run::Impl::job_turn(Run& run, std::size_t k) {
  auto& l = lanes[k];
  const int event = static_cast<int>(l.word.event);
  if (!l.member() && event == 1) {
    l.fresh = false;
    l.started = Clock::now();
  }
  if (!l.member() && event == 2) ++l.steps;
  if (event == 2) first_step_of(l);
  branched = false;
  if (event != 3) {
    Boundary b{.first = event == 1, .step = std::nullopt};
    if (event == 2)
      b.step = l.member() && l.last
                   ? *l.last
                   : solver::StepResult{.step = static_cast<std::int64_t>(l.word.step), .time = l.word.time};
    for (auto* o : observers) {
      if (!o->job_wide()) continue;
      o->at_boundary(run, b);
      if (branched) return;
    }
    schedule();  // steering may have moved its next output
    return;
  }
  for (auto o = observers.rbegin(); o != observers.rend(); ++o) {
    if (!(*o)->job_wide()) continue;
    (*o)->at_end(run);
    if (branched) return;
  }
  const int mine = l.member() && !l.stop && !l.solver->finished() ? 1 : 0;
  int goes_on = 0;
  MPI_Allreduce(&mine, &goes_on, 1, MPI_INT, MPI_MAX, comm);
  if (goes_on != 0) {
    schedule();
    return;
  }
  l.ended = true;
  if (l.output) l.output->close();  // the last steps handed off are committed, or their error thrown
}

}  // namespace rwd::driver
