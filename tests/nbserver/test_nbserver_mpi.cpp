// The neighbourhood server over MPI: world rank 0 serves, the others compute.
//
// Every rank builds the same trees. The server rank serves them; each compute rank
// asks the server and compares every answer with its own in-process Topology.
// On one process there is no server: the plan comes from the local topology.
#include <catch2/catch.hpp>

#include "exchange_test_util.hpp"
#include "mpi_test_util.hpp"
#include "rewind/launch/roles.hpp"
#include "rewind/nbserver/client.hpp"
#include "rewind/nbserver/server.hpp"

using namespace rwd::launch;
using namespace rwd::nbserver;
using namespace rwd::forest;
using namespace rwd::spacetree;
namespace rt = rwd::test;

namespace {

struct Case {
  std::string name;
  Tree tree;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  v.push_back({"3-D adaptive", rt::random_adaptive(rt::shape_of(3, 4, 3), 21)});
  v.push_back({"3-D adaptive, periodic y", rt::random_adaptive(rt::shape_of(3, 4, 3, {false, true, false}), 22)});
  v.push_back({"3-D full", Tree::full(rt::shape_of(3, 4, 2), 2)});
  v.push_back({"2-D adaptive, periodic x", rt::random_adaptive(rt::shape_of(2, 4, 5, {true, false, false}), 23, 1, 0.3)});
  return v;
}

/// Runs `compute` on the compute ranks while rank 0 serves `topology`; returns on
/// every rank once the server has been shut down.
template <typename F>
void with_server(const Roles& roles, const Tree& tree, F&& compute) {
  const Topology topo(tree, partition_morton(tree, roles.compute_size));
  if (roles.role == Role::server) {
    Server server(topo, roles.service());
    const ServerStats s = server.serve();
    CHECK(s.requests > 0);
  } else {
    Client client(roles);
    compute(client, topo);
    client.shutdown_server(roles.compute());
  }
}

}  // namespace

TEST_CASE("client: a job of one process has no server to ask", "[nbserver][mpi]") {
  const Roles roles = split_roles(MPI_COMM_WORLD);
  if (rt::world_size() == 1) CHECK_THROWS_AS(Client(roles), std::invalid_argument);
  else CHECK_NOTHROW(Client(roles));
}

TEST_CASE("server answers equal the pure topology on random adaptive trees", "[nbserver][mpi]") {
  const Roles roles = split_roles(MPI_COMM_WORLD);
  for (auto& [name, tree] : cases()) {
    SECTION(name) {
      if (!roles.has_server()) {
        // One process: no server; the plan comes from the in-process topology.
        const Topology topo(tree, partition_morton(tree, 1));
        TopologyPlanSource src(topo, 0);
        CHECK(equal(src.plan(), make_local_plan(topo, 0)));
        CHECK(src.plan().grids.size() == tree.size());
        continue;
      }
      with_server(roles, tree, [&](Client& client, const Topology& topo) {
        // Each compute rank asks about every grid (in batches), plus a missing one.
        std::vector<Uid> all;
        for (const auto& n : topo.tree().nodes()) all.push_back(n.uid);
        bool ok = true;
        for (std::size_t first = 0; first < all.size(); first += 97) {
          const std::span<const Uid> batch(all.data() + first, std::min<std::size_t>(97, all.size() - first));
          const auto nb = client.neighbours(batch);
          const auto fam = client.families(batch);
          const auto own = client.owners(batch);
          for (std::size_t i = 0; i < batch.size(); ++i) {
            ok = ok && nb[i] == topo.neighbours(batch[i]);
            ok = ok && equal(fam[i], topo.family(batch[i]));
            ok = ok && own[i] == topo.owner(batch[i]);
          }
        }
        CHECK(ok);
        const Uid missing = Uid::make(topo.tree().levels(), {0, 0, 0});
        CHECK(client.owners(std::vector<Uid>{missing}) == std::vector<std::int32_t>{-1});
        try {
          (void)client.neighbours(std::vector<Uid>{all[0], missing});
          FAIL("an unknown UID must be an error");
        } catch (const ServerError& e) {
          CHECK(e.code() == ErrorCode::unknown_uid);
        }
        for (int level = 0; level < topo.tree().levels(); ++level) {
          const Box box{{0.1 * level, 0.25, 0.0}, {0.1 * level + 0.4, 0.8, 0.06}};
          const BoxReply br = client.grids_in_box(box, level);
          CHECK(br.uids == topo.grids_in_box(box, level));
        }
        // The plan, cached after the first request.
        const auto before = client.stats().requests;
        const LocalPlan p1 = client.plan();
        const LocalPlan p2 = client.plan();
        CHECK(client.stats().requests == before + 1);
        CHECK(equal(p1, make_local_plan(topo, roles.compute_rank)));
        CHECK(equal(p1, p2));
        client.invalidate();
        CHECK(equal(client.plan(), p1));
        CHECK(client.stats().requests == before + 2);
      });
    }
  }
}

TEST_CASE("a forest built from the server's plan exchanges halos", "[nbserver][forest][mpi]") {
  const Roles roles = split_roles(MPI_COMM_WORLD);
  const Tree tree = rt::random_adaptive(rt::shape_of(3, 4, 3), 31);
  const rt::Field f = [](double x, double y, double z) { return 2.0 + x - 3.0 * y + 0.5 * z; };
  auto check_forest = [&](LocalPlan plan, MPI_Comm comm) {
    Forest fo(std::move(plan), 1, comm);
    rt::fill_leaves(fo, 0, f);
    fo.communicate(std::vector<int>{0}, Interp::linear);
    const auto e = rt::halo_errors(fo, 0, f, comm);
    CHECK(e.same <= 1e-13);
    CHECK(e.coarser <= 1e-13);
    CHECK(e.coarser_cells > 0);
  };
  if (!roles.has_server()) {
    const Topology topo(tree, partition_morton(tree, 1));
    TopologyPlanSource src(topo, 0);
    check_forest(src.plan(), roles.compute());
    return;
  }
  with_server(roles, tree, [&](Client& client, const Topology&) { check_forest(client.plan(), roles.compute()); });
}
