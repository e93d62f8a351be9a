// The tree a live collector selects windows on when no neighbourhood server holds it
// (rewind/live/tree.hpp), on 1-4 ranks: gathered from every rank's grids it has the rows
// of a file's step (level, rank, key) and each row's owner, against the partition the
// grids were spread by; its selections equal window::select on the same tree built on
// one process (spacetree arrays: an independent path), piece for piece, with the owner
// the partition gives; and it crosses the link's wire unchanged.
#include <catch2/catch.hpp>
#include <mpi.h>

#include <stdexcept>

#include "exchange_test_util.hpp"
#include "rewind/live/relay.hpp"
#include "rewind/live/tree.hpp"
#include "compute_link.hpp"
#include "rewind/spacetree/geometry.hpp"
#include "rewind/spacetree/partition.hpp"
#include "rewind/spacetree/topology.hpp"
#include "rewind/window/tree_view.hpp"

namespace st = rwd::spacetree;
namespace rt = rwd::test;
using namespace rwd::live;
using rwd::collector::RunState;

namespace {

// This rank's grids of `topo`, as a code describes them (records, no data).
rwd::kernel::LocalGrids describe(const st::Topology& topo, int rank) {
  const auto& tree = topo.tree();
  rwd::kernel::LocalGrids g;
  const auto& s = tree.shape().s;
  g.block = {s[0], s[1], s[2]};
  for (const auto& n : tree.nodes()) {
    if (topo.owner(n.uid) != rank) continue;
    rwd::kernel::GridRecord r;
    r.uid = n.uid.raw();
    r.level = n.uid.level();
    r.sort_key = n.uid.morton();
    r.bbox = st::interleaved(tree.shape().bounding_box(n.uid));
    r.parent_uid = n.parent < 0 ? rwd::kernel::kNoUid : tree.nodes()[static_cast<std::size_t>(n.parent)].uid.raw();
    if (!n.is_leaf())
      for (int c = 0; c < tree.shape().children_per_grid(); ++c)
        r.child_uids.push_back(tree.nodes()[static_cast<std::size_t>(n.first_child + c)].uid.raw());
    g.grids.push_back(std::move(r));
  }
  return g;
}

}  // namespace

TEST_CASE("the gathered tree selects the windows one process selects, with the partition's owners", "[live][mpi]") {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const int dim : {2, 3}) {
    const st::Tree tree = rt::random_adaptive(rt::shape_of(dim, 4, dim == 2 ? 5 : 3), 7 + static_cast<unsigned>(dim));
    const st::Topology topo(tree, st::partition_morton(tree, size));
    auto snap = gather_tree(MPI_COMM_WORLD, describe(topo, rank));
    CHECK(snap.has_value() == (rank == 0));
    if (!snap) continue;
    const auto& t = snap->topo;
    REQUIRE(t.n_grids == static_cast<std::int64_t>(tree.nodes().size()));
    // Rows: level-major, within a level by owner then key; the root is row 0.
    CHECK(t.level[0] == 0);
    for (std::int64_t i = 1; i < t.n_grids; ++i) {
      const auto a = static_cast<std::size_t>(i - 1), b = static_cast<std::size_t>(i);
      CHECK(std::tie(t.level[a], snap->owner[a], t.sort_key[a]) < std::tie(t.level[b], snap->owner[b], t.sort_key[b]));
      CHECK(snap->owner[b] == topo.owner(st::Uid::from_raw(t.uid[b])));
    }
    // The same windows as window::select on the tree's own arrays, on one process.
    const auto arrays = rwd::window::arrays_of(tree);
    for (const std::int64_t budget : {1, 50, 700, 5000, 0}) {
      rwd::window::Window w;
      w.box.lo = {0.1, 0.2, 0.0};
      w.box.hi = {0.7, 0.9, dim == 3 ? 0.5 : 0.0};
      w.budget = budget;
      const auto want = rwd::window::select(arrays.view(), w);
      const auto got = select(*snap, w);
      CHECK(got.level == want.level);
      CHECK(got.stride == want.stride);
      REQUIRE(got.pieces.size() == want.pieces.size());
      for (std::size_t i = 0; i < want.pieces.size(); ++i) {
        const auto uid = tree.nodes()[static_cast<std::size_t>(want.pieces[i].row)].uid;
        CHECK(got.pieces[i].uid == uid.raw());
        CHECK(got.pieces[i].owner == topo.owner(uid));
        CHECK(got.pieces[i].piece.first == want.pieces[i].first);
        CHECK(got.pieces[i].piece.count == want.pieces[i].count);
        CHECK(got.pieces[i].piece.origin == want.pieces[i].origin);
      }
    }
    // Over the wire (to a collector on another rank): the same rows, links rebuilt, the
    // future it describes named.
    snap->file = "future-b.h5";
    const auto back = decode_tree(encode(*snap));
    CHECK(back.file == "future-b.h5");
    CHECK(back.topo.uid == t.uid);
    CHECK(back.topo.child_rows == t.child_rows);
    CHECK(back.topo.parent_row == t.parent_row);
    CHECK(back.topo.level_offsets == t.level_offsets);
    CHECK(back.owner == snap->owner);
  }
}

TEST_CASE("a collector keeps one tree per future and selects on the one a window names", "[live]") {
  const auto tree = [](const std::string& file, std::int32_t owner) {
    auto t = std::make_shared<TreeSnapshot>();
    t->file = file;
    t->owner = {owner};
    return std::shared_ptr<const TreeSnapshot>(std::move(t));
  };
  TreeStore store;
  CHECK(store.get("") == nullptr);
  store.put(tree("a.h5", 0));
  store.put(tree("b.h5", 2));
  CHECK(store.get("a.h5")->owner.front() == 0);  // not the latest: a's own
  CHECK(store.get("b.h5")->owner.front() == 2);
  CHECK(store.get("")->file == "b.h5");  // no future named: the latest
  store.put(tree("a.h5", 1));            // a's tree again (an adaptive step): replaced
  CHECK(store.get("a.h5")->owner.front() == 1);
  CHECK(store.get("")->file == "a.h5");
  CHECK(store.get("c.h5")->file == "a.h5");  // none of its own: the latest
}

TEST_CASE("a child described on no rank is refused on every rank", "[live][mpi]") {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  rwd::kernel::LocalGrids g;
  g.block = {4, 4, 1};
  if (rank == 0) {
    rwd::kernel::GridRecord root;
    root.uid = 0;
    root.level = 0;
    root.child_uids = {1ull << 58};  // never described
    g.grids.push_back(root);
  }
  CHECK_THROWS_WITH(gather_tree(MPI_COMM_WORLD, g), Catch::Contains("no compute rank describes"));
}

TEST_CASE("remembering answers a window it answered lately from memory, and asks for any other", "[live]") {
  int asked = 0;
  const Selector select = remembering(
      [&](const rwd::window::Window& w) {
        ++asked;
        if (w.budget < 0) throw std::invalid_argument("negative budget");
        Selection s;
        s.level = static_cast<int>(w.budget);  // which window this answers
        s.pieces.push_back({static_cast<std::uint64_t>(w.max_level + 10), 1, {}});
        return s;
      },
      2);
  rwd::window::Window a, b, c;
  a.box.hi = b.box.hi = c.box.hi = {1, 1, 1};
  a.budget = 5, b.budget = 6, c.budget = 5;
  c.max_level = 2;  // a's box and budget, another level cap
  CHECK(select(a).level == 5);
  CHECK(select(a).level == 5);
  CHECK(asked == 1);
  CHECK(select(b).level == 6);
  CHECK(select(c).pieces.at(0).uid == 12);
  CHECK(asked == 3);
  CHECK(select(c).pieces.at(0).uid == 12);  // the newest two are kept: b and c
  CHECK(select(b).level == 6);
  CHECK(asked == 3);
  CHECK(select(a).level == 5);  // the oldest went
  CHECK(asked == 4);
  rwd::window::Window bad = a;
  bad.budget = -1;
  CHECK_THROWS_AS(select(bad), std::invalid_argument);
  CHECK_THROWS_AS(select(bad), std::invalid_argument);  // a refusal is asked again
  CHECK(asked == 6);
}

TEST_CASE("the collector naps long while a running job's boundary is far, briefly once it is due", "[live]") {
  using std::chrono::microseconds;
  CHECK(reply_nap(RunState::paused, 0.0, 0.0) == microseconds(100));
  CHECK(reply_nap(RunState::running, 0.0, 5.0) == microseconds(2000));    // no rate yet
  CHECK(reply_nap(RunState::running, 5.0, 0.010) == microseconds(2000));  // 200 ms steps, 10 ms in
  CHECK(reply_nap(RunState::running, 5.0, 0.195) == microseconds(2000));  // 5 ms before it
  CHECK(reply_nap(RunState::running, 5.0, 0.197) == microseconds(100));   // 3 ms before it
  CHECK(reply_nap(RunState::running, 5.0, 0.400) == microseconds(100));   // late: stays brief
}
