// The writing side of the hand-off (forward.hpp): a group's server, the dedicated I/O
// ranks' loop around it, and the compute ranks' release.
#include "rewind/kernel/io_ranks.hpp"

#include <fmt/core.h>

#include "write/forward/forward.hpp"
#include "rewind/mpi/message.hpp"

namespace rwd::kernel {

namespace detail {

StepServer::StepServer(MPI_Comm group, MPI_Comm writers, bool self_client, StepConsumer* consumer,
                       std::function<void(const char*)> on_phase)
    : group_(group),
      writers_(writers),
      self_client_(self_client),
      consumer_(consumer),
      on_phase_(std::move(on_phase)),
      consumer_active_(consumer != nullptr) {
  int n = 0;
  MPI_Comm_rank(group_, &me_);
  MPI_Comm_size(group_, &n);
  for (int r = 0; r < n; ++r)
    if (r != me_ || self_client_) clients_.push_back(r);
  in_.resize(clients_.size());
}

StepServer::~StepServer() {
  // Every client takes every reply before it lets its server go (it settles each step and
  // the close); wait for the sends, so no buffer goes while MPI may still read it.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (auto& [rq, bytes] : replies_) MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

void StepServer::reply_all(Packer& msg) {
  // Finished sends go; the rest stay until their client takes them (a client settles a
  // step's reply only when it needs the slot again).
  while (!replies_.empty()) {
    int done = 0;
    MPI_Test(&replies_.front().first, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    replies_.pop_front();
  }
  for (int c : clients_) {
    replies_.emplace_back(MPI_REQUEST_NULL, msg.bytes());
    auto& [rq, bytes] = replies_.back();
    mpi::check(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, c, kReplyTag, group_, &rq),
               "I/O ranks", "MPI_Isend");
  }
}

std::vector<Unpacker> StepServer::receive(Op& op) {
  const double t0 = MPI_Wtime();
  // An I/O rank waits between output steps, sharing its node with the compute ranks it
  // serves: napping, not a blocking probe that spins a core away from them (backoff.hpp).
  const mpi::Backoff napping;
  for (std::size_t i = 0; i < clients_.size(); ++i)
    mpi::receive_message(clients_[i], kCommandTag, group_, in_[i], "I/O ranks", &napping);
  stats_.idle_seconds += MPI_Wtime() - t0;
  std::vector<Unpacker> u;
  u.reserve(in_.size());
  for (const auto& m : in_) u.emplace_back(m);
  for (auto& x : u)
    if (const Op o = x.get<Op>(); &x == &u.front()) op = o;
    else if (o != op)
      throw FileError(ErrorKind::io, "", "I/O ranks: the compute ranks of a group sent different commands");
  return u;
}

bool StepServer::serve_one() {
  Op op{};
  std::vector<Unpacker> u = receive(op);
  switch (op) {
    case Op::open: open(u[0]); return true;
    case Op::resize: resize(u); return true;
    case Op::step: step(u); return true;
    case Op::close: close(); return true;
    case Op::release:
      for (auto& [rq, bytes] : replies_) MPI_Wait(&rq, MPI_STATUS_IGNORE);
      replies_.clear();
      return false;
  }
  throw FileError(ErrorKind::io, "", fmt::format("I/O ranks: unknown command {}", static_cast<int>(op)));
}

void StepServer::open(Unpacker& u) {
  const bool append = u.get<std::uint8_t>() != 0;
  const std::string path = u.string();
  const CommonInfo common = u.common();
  IoOptions options = u.options();
  options.strategy = Strategy::collective;  // among the writers
  WriterEnv env;
  env.on_phase = on_phase_;
  Packer out;
  try {
    writer_.reset();
    writer_.emplace(append ? Writer::append(writers_, path, options, env)
                           : Writer::create(writers_, path, common, options, env));
    out.put(std::uint8_t{1});
    out.put(writer_->last_step());
    out.put(writer_->common());
  } catch (const FileError& e) {
    out.put(std::uint8_t{0});
    out.put(e);
  }
  reply_all(out);
}

void StepServer::resize(std::vector<Unpacker>& u) {
  std::int64_t own = 0;
  if (self_client_)
    for (std::size_t i = 0; i < clients_.size(); ++i)
      if (clients_[i] == me_) own = u[i].get<std::int64_t>();
  window_.allocate(group_, own);
}

void StepServer::step(std::vector<Unpacker>& u) {
  window_.sync();
  LocalGrids grids;
  StepInfo info;
  std::vector<FieldSpec> consume;
  std::uint8_t what = 0;
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    const auto offset = u[i].get<std::int64_t>();
    what = u[i].get<std::uint8_t>();  // the same from every client (a collective call)
    StepInfo mine = u[i].step();
    auto theirs = u[i].fields();
    if (i == 0) {
      info = std::move(mine);
      consume = std::move(theirs);
    }
    // No window yet: no client had a grid to send (an empty step).
    unpack_grids(u[i], window_.empty() ? nullptr : window_.of(clients_[i]) + offset, grids);
  }
  WriteStats st;
  const std::optional<FileError> failed = (what & kWriteStep) ? write(info, grids, st) : std::nullopt;
  // After the write (a step the consumer sees is in the file when it is written at
  // all), before the reply (the reply frees the slot the grids point into). Every I/O
  // rank gets the same steps and its consumer the same verdicts: the call is collective.
  if ((what & kConsumeStep) && consumer_active_) {
    ++stats_.consumed;
    info.fields = std::move(consume);
    consumer_active_ = consumer_->consume(info, grids, writers_, writer_ ? writer_->path() : std::string());
  }
  Packer out;
  out.put(static_cast<std::uint8_t>(!failed));
  if (failed) {
    out.put(*failed);
  } else {
    out.put((what & kWriteStep) ? info.step : std::int64_t{-1});
    out.put(st.bytes);
    out.put(st.seconds);
    out.put(static_cast<std::uint8_t>(consumer_active_));
  }
  reply_all(out);
}

std::optional<FileError> StepServer::write(const StepInfo& info, const LocalGrids& grids, WriteStats& st) {
  try {
    if (!writer_) throw FileError(ErrorKind::invalid_argument, "", "no file is open on the I/O ranks");
    st = writer_->write_step(info, grids);
    ++stats_.steps;
    stats_.bytes += st.bytes;
    stats_.write_seconds += st.seconds;
  } catch (const FileError& e) {
    return e;
  } catch (const std::exception& e) {
    return FileError(ErrorKind::io, writer_ ? writer_->path() : "", e.what());
  }
  return std::nullopt;
}

void StepServer::close() {
  Packer out;
  try {
    if (writer_) writer_->close();
    out.put(std::uint8_t{1});
  } catch (const FileError& e) {
    out.put(std::uint8_t{0});
    out.put(e);
  }
  writer_.reset();
  reply_all(out);
  window_.release();
}

}  // namespace detail

IoRankStats serve_io_ranks(MPI_Comm group, MPI_Comm io, StepConsumer* consumer,
                           std::function<void(const char*)> on_phase) {
  detail::StepServer server(group, io, false, consumer, std::move(on_phase));
  while (server.serve_one()) {
  }
  return server.stats();
}

void release_io_ranks(MPI_Comm group) {
  int n = 0;
  MPI_Comm_size(group, &n);
  detail::Packer msg;
  msg.put(detail::Op::release);
  detail::send_command(group, n - 1, msg);
}

}  // namespace rwd::kernel
