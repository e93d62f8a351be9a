// The live collector's shared memory (rewind/live/memory.hpp): a compute rank of the
// same node maps the collector's segment and writes into it; a name that does not match
// (another node, another segment, a stale size or token) is refused, never mapped.
// Run on 1..4 ranks: rank 0 plays the collector, every rank writes its own stretch.
#include <catch2/catch.hpp>
#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rewind/live/memory.hpp"

using rwd::live::SegmentName;
using rwd::live::SharedSegment;

namespace {

struct Wire {  // a SegmentName as rank 0 broadcasts it (the collector sends it as JSON)
  int pid, fd;
  std::uint64_t token, bytes;
};

}  // namespace

TEST_CASE("every rank of the node maps the collector's segment and writes into it", "[live][mpi]") {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr std::uint64_t kPerRank = 1 << 16;  // doubles
  SharedSegment owner;
  Wire w{};
  if (rank == 0) {
    owner = SharedSegment::create(kPerRank * 8 * static_cast<std::uint64_t>(size));
    REQUIRE(owner);
    REQUIRE(owner.bytes() == kPerRank * 8 * static_cast<std::uint64_t>(size));
    w = {owner.name().pid, owner.name().fd, owner.name().token, owner.name().bytes};
  }
  MPI_Bcast(&w, sizeof w, MPI_BYTE, 0, MPI_COMM_WORLD);
  const SegmentName name{rwd::live::node_id(), w.pid, w.fd, w.token, w.bytes};  // one node under ctest
  auto mine = SharedSegment::attach(name);
  REQUIRE(mine.has_value());
  auto* values = reinterpret_cast<double*>(mine->data()) + kPerRank * static_cast<std::uint64_t>(rank);
  for (std::uint64_t i = 0; i < kPerRank; ++i) values[i] = 1000.0 * rank + static_cast<double>(i);
  MPI_Barrier(MPI_COMM_WORLD);  // the ranks' stores before rank 0 reads them
  if (rank == 0) {
    const auto* all = reinterpret_cast<const double*>(owner.data());
    int wrong = 0;
    for (int r = 0; r < size; ++r)
      for (std::uint64_t i = 0; i < kPerRank; ++i)
        wrong += all[kPerRank * static_cast<std::uint64_t>(r) + i] != 1000.0 * r + static_cast<double>(i);
    CHECK(wrong == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // nobody unmaps before rank 0 has read
}

TEST_CASE("a segment name that does not match is not mapped", "[live]") {
  auto owner = SharedSegment::create(4096);
  const SegmentName good = owner.name();
  CHECK(good.pid == static_cast<int>(::getpid()));
  CHECK(SharedSegment::attach(good).has_value());

  SegmentName other_node = good;
  other_node.node = "some-other-host/" + good.node;
  CHECK_FALSE(SharedSegment::attach(other_node).has_value());

  SegmentName wrong_token = good;
  wrong_token.token ^= 1;
  CHECK_FALSE(SharedSegment::attach(wrong_token).has_value());

  SegmentName wrong_size = good;
  wrong_size.bytes += 4096;
  CHECK_FALSE(SharedSegment::attach(wrong_size).has_value());

  SegmentName no_such_fd = good;
  no_such_fd.fd = 1 << 20;
  CHECK_FALSE(SharedSegment::attach(no_such_fd).has_value());

  SegmentName not_a_segment = good;  // an open file of the process that is not one
  not_a_segment.fd = 0;
  CHECK_FALSE(SharedSegment::attach(not_a_segment).has_value());
}

TEST_CASE("a mapping outlives the creator's handle (a reply still being written)", "[live]") {
  auto owner = std::make_unique<SharedSegment>(SharedSegment::create(4096));
  auto mapped = SharedSegment::attach(owner->name());
  REQUIRE(mapped.has_value());
  std::memcpy(owner->data(), "window", 6);
  owner.reset();  // the collector replaced its slot
  CHECK(std::memcmp(mapped->data(), "window", 6) == 0);
  // Moving keeps one mapping.
  SharedSegment moved = std::move(*mapped);
  CHECK_FALSE(*mapped);
  CHECK(std::memcmp(moved.data(), "window", 6) == 0);
}
