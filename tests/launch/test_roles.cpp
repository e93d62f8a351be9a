// The launch model (launch/roles.hpp): which part each world rank plays, on 1..4 ranks.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "mpi_test_util.hpp"
#include "rewind/launch/roles.hpp"

using namespace rwd::launch;
namespace rt = rwd::test;

TEST_CASE("roles: rank 0 serves, the others compute in world order", "[launch][mpi]") {
  const Roles roles = split_roles(MPI_COMM_WORLD);
  const int size = rt::world_size(), rank = rt::world_rank();
  if (size == 1) {
    CHECK(roles.role == Role::compute);
    CHECK(!roles.has_server());
    CHECK(roles.compute_size == 1);
    CHECK(roles.compute_rank == 0);
    CHECK(roles.first_compute == 0);
  } else {
    CHECK(roles.has_server());
    CHECK(roles.compute_size == size - 1);
    CHECK(roles.role == (rank == 0 ? Role::server : Role::compute));
    CHECK(roles.compute_rank == (rank == 0 ? -1 : rank - 1));
    CHECK((roles.compute() == MPI_COMM_NULL) == (rank == 0));
    CHECK(roles.first_compute == 1);
  }
  if (size < 3) CHECK_THROWS_AS(split_roles(MPI_COMM_WORLD, RoleLayout{true}), std::invalid_argument);
  else {
    const Roles with_collector = split_roles(MPI_COMM_WORLD, RoleLayout{true});
    CHECK(with_collector.collector_rank == 1);
    CHECK(with_collector.compute_size == size - 2);
    CHECK(with_collector.role == (rank == 0 ? Role::server : rank == 1 ? Role::collector : Role::compute));
    // Compute rank 0 is the first world rank after the services.
    CHECK(with_collector.first_compute == 2);
    CHECK(with_collector.compute_rank == (rank < 2 ? -1 : rank - with_collector.first_compute));
  }
}

TEST_CASE("roles: dedicated I/O ranks are the last of the node, after its compute ranks", "[launch][mpi]") {
  const int size = rt::world_size(), rank = rt::world_rank();
  const RoleLayout one_per_node{.io_ranks_per_node = 1};
  if (size == 1) {
    // One process computes alone: there is no server, and no I/O rank.
    const Roles roles = split_roles(MPI_COMM_WORLD, one_per_node);
    CHECK(roles.role == Role::compute);
    CHECK(roles.io_size == 0);
  } else if (size == 2) {
    // The server and a single other process: no room for an I/O rank and a compute rank.
    CHECK_THROWS_AS(split_roles(MPI_COMM_WORLD, one_per_node), std::invalid_argument);
  } else {
    // The tests run on one node: the last world rank is its I/O rank.
    const Roles roles = split_roles(MPI_COMM_WORLD, one_per_node);
    CHECK(roles.io_size == 1);
    CHECK(roles.compute_size == size - 2);
    CHECK(roles.role == (rank == 0 ? Role::server : rank == size - 1 ? Role::io : Role::compute));
    CHECK((roles.io() == MPI_COMM_NULL) == (rank != size - 1));
    CHECK((roles.io_group() == MPI_COMM_NULL) == (rank == 0));
    CHECK(roles.first_compute == 1);
  }
}

TEST_CASE("first_compute_rank: after the server, and after the collector when there is one", "[launch]") {
  STATIC_REQUIRE(first_compute_rank(1, false) == 0);
  STATIC_REQUIRE(first_compute_rank(4, false) == 1);
  STATIC_REQUIRE(first_compute_rank(4, true) == 2);
}
