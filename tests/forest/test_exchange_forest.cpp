// Forest: the three-phase ghost-layer exchange on 1..4 ranks.
//
// Every test case runs on MPI_COMM_WORLD (the ctest entries run this binary on 1, 2,
// 3 and 4 ranks); trees are built identically on every rank.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <iostream>
#include <numbers>
#include <sstream>

#include "exchange_test_util.hpp"
#include "mpi_test_util.hpp"

using namespace rwd::forest;
using namespace rwd::spacetree;
namespace rt = rwd::test;

namespace {

struct NamedTree {
  std::string name;
  Tree tree;
};

std::vector<NamedTree> test_trees() {
  std::vector<NamedTree> v;
  v.push_back({"3-D full", Tree::full(rt::shape_of(3, 4, 2), 2)});
  v.push_back({"3-D adaptive", rt::random_adaptive(rt::shape_of(3, 4, 3), 11)});
  v.push_back({"3-D adaptive, periodic x", rt::random_adaptive(rt::shape_of(3, 4, 3, {true, false, false}), 12)});
  v.push_back({"2-D full", Tree::full(rt::shape_of(2, 4, 3), 3)});
  v.push_back({"2-D adaptive", rt::random_adaptive(rt::shape_of(2, 4, 4), 13, 1, 0.3)});
  v.push_back({"2-D adaptive, periodic x and y", rt::random_adaptive(rt::shape_of(2, 6, 4, {true, true, false}), 14, 1, 0.3)});
  return v;
}

/// A smooth field that is periodic wherever the shape is (so wrapped halos match).
rt::Field smooth_for(const TreeShape& sh) {
  const double tau = 2.0 * std::numbers::pi;
  const bool px = sh.periodic[0], py = sh.periodic[1];
  return [=](double x, double y, double z) {
    const double fx = px ? std::sin(tau * x) : std::sin(2.0 * x + 0.3);
    const double fy = py ? std::cos(tau * y) : std::cos(1.7 * y);
    return fx * fy + 0.25 * z * z;
  };
}

/// A linear field that is constant along periodic axes (linear fields cannot wrap).
rt::Field linear_for(const TreeShape& sh) {
  const double cx = sh.periodic[0] ? 0.0 : 3.0, cy = sh.periodic[1] ? 0.0 : -2.0;
  return [=](double x, double y, double z) { return 1.0 + cx * x + cy * y + 0.5 * z; };
}

const std::vector<int> kVar0{0};

}  // namespace

TEST_CASE("same-level halos are exact copies; level jumps are exact for linear fields", "[forest][mpi]") {
  for (auto& [name, tree] : test_trees()) {
    SECTION(name) {
      Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 2, MPI_COMM_WORLD);
      const TreeShape& sh = fo.shape();
      GIVEN("every level filled with a smooth field, no restriction") {
        const auto f = smooth_for(sh);
        rt::fill_all_levels(fo, 1, f);
        fo.exchange_halos(std::vector<int>{1}, -1, Interp::linear);
        const auto e = rt::halo_errors(fo, 1, f, MPI_COMM_WORLD);
        THEN("every same-level halo cell equals the neighbour's cell bit for bit") {
          CHECK(e.same_cells > 0);
          CHECK(e.same == 0.0);
        }
      }
      GIVEN("every level filled with a linear field") {
        const auto f = linear_for(sh);
        rt::fill_all_levels(fo, 0, f);
        fo.exchange_halos(kVar0, -1, Interp::linear);
        const auto e = rt::halo_errors(fo, 0, f, MPI_COMM_WORLD);
        THEN("halos next to coarser grids are reconstructed exactly (to rounding)") {
          CHECK(e.same == 0.0);
          CHECK(e.coarser <= 1e-13);
          if (name.find("adaptive") != std::string::npos) CHECK(e.coarser_cells > 0);
        }
      }
      GIVEN("only the leaves filled with a linear field, everything else poisoned") {
        const auto f = linear_for(sh);
        rt::fill_leaves(fo, 0, f);
        WHEN("the full communication phase runs") {
          fo.communicate(kVar0, Interp::linear);
          const auto e = rt::halo_errors(fo, 0, f, MPI_COMM_WORLD);
          THEN("parents hold averages and every halo on every level matches the field") {
            CHECK(e.same <= 1e-13);
            CHECK(e.coarser <= 1e-13);
          }
        }
      }
    }
  }
}

TEST_CASE("halo interpolation across level jumps converges at second order", "[forest][mpi]") {
  for (const int dim : {2, 3}) {
    SECTION(std::to_string(dim) + "-D") {
      const std::vector<int> sizes = dim == 2 ? std::vector<int>{8, 16, 32} : std::vector<int>{4, 8, 16};
      std::vector<double> err_lin, err_const, err_lim;
      for (const int s : sizes) {
        const TreeShape sh = rt::shape_of(dim, s, 2);
        const Tree tree = rt::sphere_tree(sh, 1, {0.3, 0.3, 0.3}, 0.15);  // refines one level-1 grid
        Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 1, MPI_COMM_WORLD);
        const auto f = smooth_for(sh);
        for (const Interp ip : {Interp::linear, Interp::constant, Interp::limited}) {
          rt::fill_leaves(fo, 0, f);
          fo.communicate(kVar0, ip);
          const auto e = rt::halo_errors(fo, 0, f, MPI_COMM_WORLD, /*leaves_only=*/true);
          REQUIRE(e.coarser_cells > 0);
          (ip == Interp::linear ? err_lin : ip == Interp::constant ? err_const : err_lim).push_back(e.coarser);
        }
      }
      std::ostringstream msg;
      for (std::size_t i = 0; i < sizes.size(); ++i)
        msg << "s=" << sizes[i] << " linear " << err_lin[i] << " limited " << err_lim[i] << " constant " << err_const[i]
            << "\n";
      INFO(msg.str());
      if (rt::world_rank() == 0 && rt::world_size() == 1) std::cout << dim << "-D coarse-fine halo error\n" << msg.str();
      for (std::size_t i = 1; i < sizes.size(); ++i) {
        CHECK(err_lin[i - 1] / err_lin[i] > 3.3);     // ~4: second order
        CHECK(err_const[i - 1] / err_const[i] > 1.6);  // ~2: first order
        CHECK(err_const[i - 1] / err_const[i] < 2.6);
        CHECK(err_lim[i] <= err_const[i]);
      }
    }
  }
}

TEST_CASE("bottom-up averages conserve the integral exactly", "[forest][mpi]") {
  for (auto& [name, tree] : test_trees()) {
    SECTION(name) {
      Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 1, MPI_COMM_WORLD);
      const TreeShape& sh = fo.shape();
      // Integer values: every sum and every division by r^3 = 8 is exact in double,
      // so "exactly" can be checked with ==.
      for (std::size_t g = 0; g < fo.size(); ++g)
        for (int k = 0; k < sh.s[2]; ++k)
          for (int j = 0; j < sh.s[1]; ++j)
            for (int i = 0; i < sh.s[0]; ++i)
              fo.at(g, 0, i, j, k) = fo.grid(g).is_leaf()
                                         ? static_cast<double>((fo.grid(g).uid.raw() * 7919 + i * 31 + j * 17 + k * 5) % 1000)
                                         : -1.0;
      fo.restrict_levels(kVar0, 0);
      double leaf_sum = 0.0, root_sum = 0.0;  // integrals in units of the finest cell volume
      const int finest = fo.plan().levels - 1;
      for (std::size_t g = 0; g < fo.size(); ++g) {
        const int L = fo.grid(g).level();
        const double weight = std::pow(static_cast<double>(sh.children_per_grid()), finest - L);
        double sum = 0.0;
        for (int k = 0; k < sh.s[2]; ++k)
          for (int j = 0; j < sh.s[1]; ++j)
            for (int i = 0; i < sh.s[0]; ++i) sum += fo.at(g, 0, i, j, k);
        if (fo.grid(g).is_leaf()) leaf_sum += sum * weight;
        if (L == 0) root_sum += sum * weight;
      }
      double loc[2] = {leaf_sum, root_sum}, glob[2] = {0, 0};
      MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      CHECK(glob[0] > 0.0);
      CHECK(glob[0] == glob[1]);
      // And every parent whose children live on this rank holds their exact mean.
      bool ok = true;
      for (std::size_t g = 0; g < fo.size(); ++g) {
        const auto& fam = fo.grid(g).family;
        if (fam.children.empty()) continue;
        double csum = 0.0;
        bool all_local = true;
        for (const Uid c : fam.children) {
          const auto ci = fo.local_index(c);
          if (ci < 0) { all_local = false; break; }
          for (int k = 0; k < sh.s[2]; ++k)
            for (int j = 0; j < sh.s[1]; ++j)
              for (int i = 0; i < sh.s[0]; ++i) csum += fo.at(static_cast<std::size_t>(ci), 0, i, j, k);
        }
        if (!all_local) continue;
        double psum = 0.0;
        for (int k = 0; k < sh.s[2]; ++k)
          for (int j = 0; j < sh.s[1]; ++j)
            for (int i = 0; i < sh.s[0]; ++i) psum += fo.at(g, 0, i, j, k);
        ok = ok && psum * sh.children_per_grid() == csum;
      }
      CHECK(rt::all_ranks(ok));
    }
  }
}

TEST_CASE("results are bit-identical whatever the number of ranks", "[forest][mpi]") {
  for (auto& [name, tree] : test_trees()) {
    SECTION(name) {
      // The reference: the whole tree on one rank, computed in this same process.
      Forest ref(rt::plan_for(tree, MPI_COMM_SELF), 2, MPI_COMM_SELF);
      Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 2, MPI_COMM_WORLD);
      const std::vector<int> vars{0, 1};
      const auto f = smooth_for(tree.shape());
      const auto g2 = [](double x, double y, double z) { return std::exp(x - y) + 3.0 * z; };
      auto run = [&](Forest& x) {
        rt::fill_leaves(x, 0, f, 0.0);
        rt::fill_leaves(x, 1, g2, 0.0);
        // A boundary condition that reads the grid's own interior (reflection).
        const BoundaryFill wall = [&x](std::size_t g, const std::array<std::int8_t, 3>& d, int var) {
          const auto& sh = x.shape();
          std::array<std::int64_t, 3> lo{}, hi{};
          for (int a = 0; a < 3; ++a) {
            if (d[a] < 0) lo[a] = -1, hi[a] = 0;
            else if (d[a] > 0) lo[a] = sh.s[a], hi[a] = sh.s[a] + 1;
            else lo[a] = 0, hi[a] = sh.s[a];
          }
          for (auto k = lo[2]; k < hi[2]; ++k)
            for (auto j = lo[1]; j < hi[1]; ++j)
              for (auto i = lo[0]; i < hi[0]; ++i) {
                const std::int64_t si = d[0] ? (d[0] < 0 ? 0 : sh.s[0] - 1) : i;
                const std::int64_t sj = d[1] ? (d[1] < 0 ? 0 : sh.s[1] - 1) : j;
                const std::int64_t sk = d[2] ? (d[2] < 0 ? 0 : sh.s[2] - 1) : k;
                x.at(g, var, i, j, k) = 2.0 - x.at(g, var, si, sj, sk);
              }
        };
        x.communicate(vars, Interp::linear, wall);
        for (int L = 1; L < x.plan().levels; ++L) x.prolong_level(vars, L, ProlongMode::add, Interp::linear);
        x.exchange_halos(vars, -1, Interp::limited, wall);
        x.restrict_levels(std::vector<int>{1}, 0);
        x.exchange_halos(std::vector<int>{1}, -1, Interp::constant, wall);
      };
      run(ref);
      run(fo);
      bool same = true;
      for (std::size_t g = 0; g < fo.size(); ++g) {
        const auto r = ref.local_index(fo.grid(g).uid);
        REQUIRE(r >= 0);
        for (const int v : vars)
          same = same && std::memcmp(fo.data(g, v), ref.data(static_cast<std::size_t>(r), v),
                                     fo.block_size() * sizeof(double)) == 0;
      }
      CHECK(rt::all_ranks(same));
      // Bytes: nothing leaves a single rank; what is sent is received.
      std::int64_t loc[2] = {fo.last_exchange_stats().bytes_sent, fo.last_exchange_stats().bytes_received}, glob[2] = {};
      MPI_Allreduce(loc, glob, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      CHECK(glob[0] == glob[1]);
      CHECK(fo.last_exchange_bytes() == fo.last_exchange_stats().bytes_sent);
      if (rt::world_size() == 1) CHECK(glob[0] == 0);
      else CHECK(glob[0] > 0);
      CHECK(ref.last_exchange_bytes() == 0);
    }
  }
}

TEST_CASE("prolong interpolates parents into children", "[forest][mpi]") {
  for (auto& [name, tree] : test_trees()) {
    SECTION(name) {
      Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 1, MPI_COMM_WORLD);
      const TreeShape& sh = fo.shape();
      const auto f = linear_for(sh);
      rt::fill_all_levels(fo, 0, f);
      fo.exchange_halos(kVar0, -1, Interp::linear);  // parents' halos feed the slopes
      const int levels = fo.plan().levels;
      auto max_child_error = [&](double shift) {
        double err = 0.0;
        for (std::size_t g = 0; g < fo.size(); ++g) {
          if (fo.grid(g).level() == 0) continue;
          for (int k = 0; k < sh.s[2]; ++k)
            for (int j = 0; j < sh.s[1]; ++j)
              for (int i = 0; i < sh.s[0]; ++i) {
                double want = 0;
                rt::expected(sh, fo.grid(g).uid, i, j, k, f, want);
                err = std::max(err, std::abs(fo.at(g, 0, i, j, k) - want - shift));
              }
        }
        double glob = 0;
        MPI_Allreduce(&err, &glob, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        return glob;
      };
      WHEN("children are overwritten by linear prolongation, coarse to fine") {
        for (std::size_t g = 0; g < fo.size(); ++g)
          if (fo.grid(g).level() > 0)
            for (int k = 0; k < sh.s[2]; ++k)
              for (int j = 0; j < sh.s[1]; ++j)
                for (int i = 0; i < sh.s[0]; ++i) fo.at(g, 0, i, j, k) = -7.0;
        for (int L = 1; L < levels; ++L) {
          fo.prolong_level(kVar0, L, ProlongMode::assign, Interp::linear);
          fo.exchange_halos(kVar0, L, Interp::linear);
        }
        THEN("they reproduce the linear field") { CHECK(max_child_error(0.0) <= 1e-13); }
      }
      WHEN("a constant correction is added with piecewise-constant prolongation") {
        // Children keep f; the parents of the deepest level carry 0.5 -> children get +0.5.
        rt::fill_all_levels(fo, 0, f);
        for (std::size_t g = 0; g < fo.size(); ++g)
          if (fo.grid(g).level() == levels - 2)
            for (int k = 0; k < sh.s[2]; ++k)
              for (int j = 0; j < sh.s[1]; ++j)
                for (int i = 0; i < sh.s[0]; ++i) fo.at(g, 0, i, j, k) = 0.5;
        fo.prolong_level(kVar0, levels - 1, ProlongMode::add, Interp::constant);
        THEN("the finest children are shifted by exactly the correction") {
          double err = 0.0;
          for (std::size_t g = 0; g < fo.size(); ++g) {
            if (fo.grid(g).level() != levels - 1) continue;
            for (int k = 0; k < sh.s[2]; ++k)
              for (int j = 0; j < sh.s[1]; ++j)
                for (int i = 0; i < sh.s[0]; ++i) {
                  double want = 0;
                  rt::expected(sh, fo.grid(g).uid, i, j, k, f, want);
                  err = std::max(err, std::abs(fo.at(g, 0, i, j, k) - (want + 0.5)));
                }
          }
          double glob = 0;
          MPI_Allreduce(&err, &glob, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          CHECK(glob <= 1e-14);
        }
      }
    }
  }
}

TEST_CASE("boundary callback sees every boundary direction, faces before edges before corners", "[forest][mpi]") {
  for (auto& [name, tree] : test_trees()) {
    SECTION(name) {
      Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 3, MPI_COMM_WORLD);
      std::int64_t expected_calls = 0;
      for (std::size_t g = 0; g < fo.size(); ++g)
        for (const auto& n : fo.grid(g).neighbours)
          if (n.relation == Relation::boundary) expected_calls += 2;  // two variables
      std::int64_t calls = 0;
      bool order_ok = true, dir_ok = true;
      std::size_t last_grid = ~std::size_t{0};
      int last_rank = 0;
      const BoundaryFill cb = [&](std::size_t g, const std::array<std::int8_t, 3>& d, int var) {
        ++calls;
        const int nz = (d[0] != 0) + (d[1] != 0) + (d[2] != 0);
        if (g == last_grid && nz < last_rank) order_ok = false;
        last_grid = g;
        last_rank = nz;
        bool found = false;
        for (const auto& n : fo.grid(g).neighbours) found = found || (n.dir == d && n.relation == Relation::boundary);
        dir_ok = dir_ok && found && (var == 0 || var == 2);
        if (fo.shape().dim() == 2) dir_ok = dir_ok && d[2] == 0;
      };
      fo.exchange_halos(std::vector<int>{0, 2}, -1, Interp::linear, cb);
      CHECK(calls == expected_calls);
      CHECK(rt::all_ranks(order_ok && dir_ok));
    }
  }
}

TEST_CASE("ranks without grids take part; a periodic root is its own neighbour", "[forest][mpi]") {
  TreeShape sh = rt::shape_of(3, 4, 0, {true, true, true});
  const Tree tree(sh);  // the root only: ranks 1.. own nothing
  Forest fo(rt::plan_for(tree, MPI_COMM_WORLD), 1, MPI_COMM_WORLD);
  std::int64_t mine = static_cast<std::int64_t>(fo.size()), total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == 1);
  CHECK(mine <= 1);
  const auto f = smooth_for(sh);  // periodic in x and y; z is handled by the check's wrap
  const rt::Field fp = [&](double x, double y, double z) {
    return f(x, y, 0.0) + std::cos(2.0 * std::numbers::pi * z);
  };
  rt::fill_all_levels(fo, 0, fp);
  fo.communicate(kVar0);
  const auto e = rt::halo_errors(fo, 0, fp, MPI_COMM_WORLD);
  CHECK(e.same == 0.0);
  CHECK(e.same_cells == 6 * 16 + 12 * 4 + 8);
  CHECK(fo.last_exchange_bytes() == 0);
}

TEST_CASE("a bad plan is rejected on every rank", "[forest][mpi]") {
  TreeShape sh = rt::shape_of(3, 3, 1);  // s = 3 is not a multiple of r = 2
  const Tree tree = Tree::full(sh, 1);
  CHECK_THROWS_AS(Forest(rt::plan_for(tree, MPI_COMM_WORLD), 1, MPI_COMM_WORLD), std::invalid_argument);
  // A plan made for another communicator size.
  const Tree ok_tree = Tree::full(rt::shape_of(3, 4, 1), 1);
  if (rt::world_size() > 1)
    CHECK_THROWS_AS(Forest(rt::plan_for(ok_tree, MPI_COMM_SELF), 1, MPI_COMM_WORLD), std::invalid_argument);
}
