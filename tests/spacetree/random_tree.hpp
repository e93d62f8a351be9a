// Random adaptive trees for tests: deterministic for a seed.
#pragma once
#include <random>

#include "rewind/spacetree/tree.hpp"

namespace rwd::test {

/// A 2-D (dim = 2) or 3-D shape on [0,1]^d (z extent 1/8 in 2-D).
inline spacetree::TreeShape unit_shape(int dim, int max_depth, int s = 4, bool periodic_x = false) {
  spacetree::TreeShape sh;
  sh.domain.lo = {0.0, 0.0, 0.0};
  sh.domain.hi = {1.0, 1.0, dim == 2 ? 0.125 : 1.0};
  sh.r = {2, 2, dim == 2 ? 1 : 2};
  sh.s = {s, s, dim == 2 ? 1 : s};
  sh.max_depth = max_depth;
  sh.periodic = {periodic_x, false, false};
  return sh;
}

/// Refines leaves at random (probability p_refine per round), coarsens a few
/// families, then balances. Covers level jumps of every kind.
inline spacetree::Tree random_tree(const spacetree::TreeShape& shape, unsigned seed, int rounds = 4,
                                   double p_refine = 0.3, bool balance = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  spacetree::Tree tree = spacetree::Tree::full(shape, 1);
  for (int r = 0; r < rounds; ++r) {
    tree.adapt([&](spacetree::Uid uid, const spacetree::Box&) {
      if (u(rng) < p_refine) return spacetree::Mark::refine;
      if (uid.level() > 1 && u(rng) < 0.05) return spacetree::Mark::coarsen;
      return spacetree::Mark::keep;
    });
  }
  if (balance) tree.balance();
  return tree;
}

}  // namespace rwd::test
