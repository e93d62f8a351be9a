// The restart read's building block (kernel/src/io/direct_io.hpp, read_rows): rows of a
// plain MPI file read straight into arrays or through the bounce buffers, with every
// chunking, on 1-4 ranks and both OpenMPI I/O components.
#include <catch2/catch.hpp>
#include <hdf5.h>
#include <mpi.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "integrity/checksum.hpp"
#include "io/direct_io.hpp"
#include "format/format.hpp"
#include "mpi_test_util.hpp"
#include "toy_tree.hpp"

namespace {

using rwd::kernel::detail::DirectReads;
using rwd::kernel::detail::read_rows;
using rwd::kernel::detail::ReadRow;

// Rows of 21 uint64 words (168 bytes: copies in whole 64-byte blocks and a tail): word w
// of row i is i * 100 + w.
constexpr int kRows = 40, kWords = 21;
constexpr std::int64_t kRowBytes = kWords * 8;

std::uint64_t word(std::int64_t row, int w) { return static_cast<std::uint64_t>(row * 100 + w); }

/// A file of kRows rows, written by rank 0, open read-only on every rank.
MPI_File open_rows_file(const std::string& path) {
  if (rwd::test::world_rank() == 0) {
    std::vector<std::uint64_t> all;
    for (int i = 0; i < kRows; ++i)
      for (int w = 0; w < kWords; ++w) all.push_back(word(i, w));
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(all.data(), 8, all.size(), f) == all.size());
    std::fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File fh = MPI_FILE_NULL;
  REQUIRE(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
  return fh;
}

/// The path of a file of kRows rows (open_rows_file), closed again: for DirectReads.
std::string rows_file(const char* name) {
  std::string path = rwd::kernel::test::test_path(name);
  path.replace(path.size() - 3, 3, ".bin");
  MPI_File fh = open_rows_file(path);
  MPI_File_close(&fh);
  return path;
}

/// This rank's rows, in file order: a run, a gap, a row twice, the last row.
std::vector<std::int64_t> my_rows() {
  const int r = rwd::test::world_rank();
  std::vector<std::int64_t> rows;
  for (std::int64_t i = r; i < r + 7; ++i) rows.push_back(i);  // 7 adjacent rows
  rows.push_back(12 + r);
  rows.push_back(12 + r);  // the same row again
  for (std::int64_t i = 20; i < 31; ++i) rows.push_back(i);
  rows.push_back(kRows - 1);
  return rows;
}

/// Row `row`'s XXH3-64 by libxxhash (not the kernel's own builds of it), from its words.
std::uint64_t hash_of_row(std::int64_t row) {
  std::uint64_t w[kWords];
  for (int i = 0; i < kWords; ++i) w[i] = word(row, i);
  return XXH3_64bits(w, sizeof w);
}

bool row_is(const std::uint64_t* got, std::int64_t row) {
  for (int w = 0; w < kWords; ++w)
    if (got[w] != word(row, w)) return false;
  return true;
}

/// Every row checked once, in order, with the hash of its file bytes, and placed `shift` words into
/// its destination, every word around it still the guard (7).
void checked_and_placed(const std::vector<std::size_t>& checked, bool bytes_right,
                        const std::vector<std::int64_t>& rows, const std::vector<std::vector<std::uint64_t>>& dst,
                        int shift = 1) {
  CHECK(checked.size() == rows.size());
  CHECK(std::is_sorted(checked.begin(), checked.end()));
  CHECK(bytes_right);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << rows[i] << ", " << shift << " words into its array");
    CHECK(row_is(dst[i].data() + shift, rows[i]));
    for (std::size_t w = 0; w < dst[i].size(); ++w)
      if (w < static_cast<std::size_t>(shift) || w >= static_cast<std::size_t>(shift + kWords)) CHECK(dst[i][w] == 7);
  }
}

}  // namespace

TEST_CASE("read_rows puts every row where it belongs, whatever the runs and chunks", "[kernel][mpi]") {
  std::string path = rwd::kernel::test::test_path("direct_io");
  path.replace(path.size() - 3, 3, ".bin");
  MPI_File fh = open_rows_file(path);
  const auto rows = my_rows();

  SECTION("straight into arrays: adjacent arrays merge into one read, others not") {
    // Rows 0-2 of the list land in one block (adjacent in memory), the rest in arrays of
    // their own; every array has a guard word after the row.
    std::vector<std::uint64_t> block(3 * kWords + 1, 7);
    std::vector<std::vector<std::uint64_t>> own(rows.size(), std::vector<std::uint64_t>(kWords + 1, 7));
    std::vector<ReadRow> want;
    for (std::size_t i = 0; i < rows.size(); ++i)
      want.push_back({i < 3 ? block.data() + i * kWords : own[i].data(), rows[i] * kRowBytes});
    REQUIRE(read_rows(fh, want, kRowBytes, nullptr).empty());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      INFO("row " << rows[i]);
      CHECK(row_is(static_cast<const std::uint64_t*>(want[i].dst), rows[i]));
    }
    CHECK(block.back() == 7);
    for (std::size_t i = 3; i < rows.size(); ++i) CHECK(own[i].back() == 7);
  }

  SECTION("through the bounce buffer, placed by the callback; every row checked as it lands, in order") {
    for (std::int64_t chunk : {kRowBytes, 5 * kRowBytes / 2, std::int64_t{1} << 20})
      for (bool bounce : {false, true}) {
        INFO("chunk " << chunk << " bytes, bounce " << bounce);
        std::vector<std::vector<std::uint64_t>> dst(rows.size(), std::vector<std::uint64_t>(kWords + 2, 7));
        std::vector<ReadRow> want;
        for (std::size_t i = 0; i < rows.size(); ++i) want.push_back({dst[i].data() + (bounce ? 0 : 1), rows[i] * kRowBytes});
        int placed = 0;
        // "Unpack" = copy the row one word in, like an interior behind a ghost layer.
        std::function<void(const unsigned char*, void*)> place;
        if (bounce)
          place = [&](const unsigned char* row, void* to) {
            std::memcpy(static_cast<std::uint64_t*>(to) + 1, row, kRowBytes);
            ++placed;
          };
        std::vector<std::size_t> checked;  // the order check() saw the rows in, and whether their hashes were right
        bool bytes_right = true;
        auto check = [&](std::size_t i, std::uint64_t hash) {
          checked.push_back(i);
          bytes_right = bytes_right && hash == hash_of_row(rows[i]);
        };
        REQUIRE(read_rows(fh, want, kRowBytes, place, check, chunk).empty());
        CHECK(placed == (bounce ? static_cast<int>(rows.size()) : 0));
        checked_and_placed(checked, bytes_right, rows, dst);
      }
  }

  SECTION("a row past the end of the file is an error naming the short read") {
    std::vector<std::uint64_t> a(kWords), b(kWords);
    const std::vector<ReadRow> want = {{a.data(), 0}, {b.data(), kRows * kRowBytes}};
    for (bool bounce : {false, true}) {
      std::function<void(const unsigned char*, void*)> place;
      if (bounce) place = [&](const unsigned char* row, void* to) { std::memcpy(to, row, kRowBytes); };
      const std::string err = read_rows(fh, want, kRowBytes, place);
      INFO(err);
      CHECK(err.find("shorter") != std::string::npos);
    }
  }

  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rwd::test::world_rank() == 0) std::remove(path.c_str());
}

TEST_CASE("DirectReads (O_DIRECT, reads in flight) puts and checks every row as read_rows does", "[kernel][mpi]") {
  const std::string path = rows_file("direct_reads");
  const auto rows = my_rows();
  // Chunks of one row, 2.5 rows and 1 MiB; 1 and 4 reads in flight; straight (copied
  // into each array with non-temporal stores: to arrays 8 bytes past a 16-byte boundary
  // and on one) and placed by the callback.
  for (std::int64_t chunk : {kRowBytes, 5 * kRowBytes / 2, std::int64_t{1} << 20})
    for (int depth : {1, 4}) {
      DirectReads dr(path, chunk, depth);
      if (!dr.usable()) {
        WARN("this file system refuses O_DIRECT or Linux AIO: nothing to test");
        return;
      }
      for (int shift : {0, 1, 2}) {  // 0: placed by the callback, one word in; 1, 2: straight
        const bool bounce = shift == 0;
        INFO("chunk " << chunk << " bytes, depth " << depth << ", bounce " << bounce << ", shift " << shift);
        std::vector<std::vector<std::uint64_t>> dst(rows.size(), std::vector<std::uint64_t>(kWords + 3, 7));
        std::vector<ReadRow> want;
        for (std::size_t i = 0; i < rows.size(); ++i)
          want.push_back({dst[i].data() + (bounce ? 0 : shift), rows[i] * kRowBytes});
        std::function<void(const unsigned char*, void*)> place;
        if (bounce)
          place = [&](const unsigned char* row, void* to) {
            std::memcpy(static_cast<std::uint64_t*>(to) + 1, row, kRowBytes);
          };
        std::vector<std::size_t> checked;
        bool bytes_right = true;
        auto check = [&](std::size_t i, std::uint64_t hash) {  // straight: hashed as copied
          checked.push_back(i);
          bytes_right = bytes_right && hash == hash_of_row(rows[i]);
        };
        auto& bd = rwd::kernel::detail::read_breakdown();
        bd = {};
        REQUIRE(dr.read(want, kRowBytes, place, check).empty());
        CHECK(bd.direct_bytes == static_cast<long long>(rows.size()) * kRowBytes);
        checked_and_placed(checked, bytes_right, rows, dst, bounce ? 1 : shift);
      }
      std::vector<std::uint64_t> a(kWords), b(kWords);
      const std::string err = dr.read({{a.data(), 0}, {b.data(), kRows * kRowBytes}}, kRowBytes, nullptr, {});
      INFO(err);
      CHECK(err.find("shorter") != std::string::npos);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rwd::test::world_rank() == 0) std::remove(path.c_str());
}

TEST_CASE("DirectReads on two threads at once each get their own rows (one AIO context per thread)", "[kernel][mpi]") {
  // Each thread's reads complete on its own context: had the threads shared one, a
  // thread could take the other's completions and check a chunk that has not landed.
  const std::string path = rows_file("direct_reads_threads");
  const auto rows = my_rows();
  if (!DirectReads(path).usable()) {
    WARN("this file system refuses O_DIRECT or Linux AIO: nothing to test");
  } else {
    std::vector<int> bad(2, 0);
    auto reader = [&](int t) {
      for (int pass = 0; pass < 50; ++pass) {
        DirectReads dr(path, 2 * kRowBytes, 4);  // many small reads in flight
        std::vector<std::vector<std::uint64_t>> dst(rows.size(), std::vector<std::uint64_t>(kWords, 7));
        std::vector<ReadRow> want;
        for (std::size_t i = 0; i < rows.size(); ++i) want.push_back({dst[i].data(), rows[i] * kRowBytes});
        int wrong = 0;
        const std::string err = dr.read(want, kRowBytes, nullptr, [&](std::size_t i, std::uint64_t hash) {
          wrong += hash != hash_of_row(rows[i]) || !row_is(dst[i].data(), rows[i]);
        });
        bad[static_cast<std::size_t>(t)] += wrong + (err.empty() ? 0 : 1000);
      }
    };
    std::thread other(reader, 1);
    reader(0);
    other.join();
    CHECK(bad[0] == 0);
    CHECK(bad[1] == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rwd::test::world_rank() == 0) std::remove(path.c_str());
}

TEST_CASE("DirectReads reads several row lists as one stream, each placed and checked as read alone", "[kernel][mpi]") {
  const std::string path = rows_file("direct_jobs");
  const auto rows = my_rows();
  // Three lists (as a restart's fields): placed by a callback one word in, copied straight
  // 8 bytes in and hashed as copied, copied straight and unchecked; chunks of 2.5 rows,
  // 1 and 3 reads in flight, so reads of the next list go out while one is placed.
  for (int depth : {1, 3}) {
    DirectReads dr(path, 5 * kRowBytes / 2, depth);
    if (!dr.usable()) {
      WARN("this file system refuses O_DIRECT or Linux AIO: nothing to test");
      return;
    }
    INFO("depth " << depth);
    std::vector<std::vector<std::vector<std::uint64_t>>> dst(
        3, std::vector<std::vector<std::uint64_t>>(rows.size(), std::vector<std::uint64_t>(kWords + 3, 7)));
    std::vector<std::vector<ReadRow>> want(3);
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < rows.size(); ++i)
        want[j].push_back({dst[j][i].data() + (j == 1 ? 1 : 0), rows[i] * kRowBytes});
    std::vector<std::vector<std::size_t>> checked(3);
    std::vector<char> right(3, 1);
    const auto check_of = [&](std::size_t j) {
      return [&, j](std::size_t i, std::uint64_t hash) {
        checked[j].push_back(i);
        right[j] = right[j] && hash == hash_of_row(rows[i]);
      };
    };
    std::vector<DirectReads::Job> jobs(3);
    for (std::size_t j = 0; j < 3; ++j) jobs[j] = {&want[j], kRowBytes, {}, {}};
    jobs[0].place = [](const unsigned char* row, void* to) {
      std::memcpy(static_cast<std::uint64_t*>(to) + 1, row, kRowBytes);
    };
    jobs[0].check = check_of(0);
    jobs[1].check = check_of(1);
    auto& bd = rwd::kernel::detail::read_breakdown();
    bd = {};
    std::size_t failed = 99;
    REQUIRE(dr.read(jobs, &failed).empty());
    CHECK(failed == 99);
    CHECK(bd.direct_bytes == 3 * static_cast<long long>(rows.size()) * kRowBytes);
    checked_and_placed(checked[0], right[0] != 0, rows, dst[0], 1);
    checked_and_placed(checked[1], right[1] != 0, rows, dst[1], 1);
    CHECK(checked[2].empty());
    for (std::size_t i = 0; i < rows.size(); ++i) CHECK(row_is(dst[2][i].data(), rows[i]));

    // The second list runs past the end of the file: the error names it, the first list's
    // rows are all in place.
    std::vector<std::uint64_t> a(kWords + 3, 7), b(kWords), c(kWords);
    const std::vector<ReadRow> first{{a.data() + 1, 0}}, past{{b.data(), 0}, {c.data(), kRows * kRowBytes}};
    const std::string err =
        dr.read({DirectReads::Job{&first, kRowBytes, {}, {}}, DirectReads::Job{&past, kRowBytes, {}, {}}}, &failed);
    INFO(err);
    CHECK(err.find("shorter") != std::string::npos);
    CHECK(failed == 1);
    CHECK(row_is(a.data() + 1, 0));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rwd::test::world_rank() == 0) std::remove(path.c_str());
}

TEST_CASE("zero_copy_halo asks ROMIO for collective buffering; automatic stays otherwise", "[kernel][mpi]") {
  // What the kernel asks for (the MPI_Info in its file-access list, under both MPI-IO
  // components), and, under ROMIO, the hint as the MPI-IO layer then holds it for the
  // open file (OMPIO does not report romio_* hints back).
  std::string path = rwd::kernel::test::test_path("hints");
  for (bool halo : {false, true}) {
    INFO("zero_copy_halo " << halo);
    rwd::kernel::IoOptions o;
    o.zero_copy_halo = halo;
    const rwd::kernel::h5::Ctx c{path};
    rwd::kernel::h5::Plist fapl = rwd::kernel::detail::make_fapl(c, MPI_COMM_WORLD, o);
    {
      MPI_Comm fcomm = MPI_COMM_NULL;
      MPI_Info asked = MPI_INFO_NULL;
      REQUIRE(H5Pget_fapl_mpio(fapl, &fcomm, &asked) >= 0);
      char v[MPI_MAX_INFO_VAL + 1] = {};
      int has = 0;
      if (asked != MPI_INFO_NULL) MPI_Info_get(asked, "romio_cb_write", MPI_MAX_INFO_VAL, v, &has);
      if (halo)
        CHECK((has && std::string(v) == "enable"));  // collective buffering gathers the subarray types
      else
        CHECK((!has || std::string(v) == "automatic"));
      if (asked != MPI_INFO_NULL) MPI_Info_free(&asked);
      if (fcomm != MPI_COMM_NULL) MPI_Comm_free(&fcomm);
    }
    const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    REQUIRE(f >= 0);
    MPI_Info info = MPI_INFO_NULL;
    REQUIRE(MPI_File_get_info(rwd::kernel::detail::mpi_file_of(c, f), &info) == MPI_SUCCESS);
    char value[MPI_MAX_INFO_VAL + 1] = {};
    int found = 0;
    MPI_Info_get(info, "romio_cb_write", MPI_MAX_INFO_VAL, value, &found);
    MPI_Info_free(&info);
    H5Fclose(f);
    const char* io = std::getenv("OMPI_MCA_io");
    if (io && std::string(io) == "romio321") {
      REQUIRE(found);
      CHECK(std::string(value) == (halo ? "enable" : "automatic"));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rwd::test::world_rank() == 0) std::remove(path.c_str());
}

TEST_CASE("hash_and_copy gives libxxhash's XXH3-64 of the bytes and copies exactly them", "[kernel]") {
  // Lengths around XXH3's short-input forms (<= 240 bytes), its 64-byte stripes and
  // 1 KiB blocks, and the 8 KiB pieces the copy goes in; destinations on a 16-byte
  // boundary, 8 bytes past one (a scalar first store) and 3 bytes past one (memcpy).
  std::vector<unsigned char> src(3 * 8192 + 4096);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + (i >> 8));
  for (std::size_t n : {0, 1, 8, 17, 128, 240, 241, 1024, 1032, 8184, 8192, 8200, 2 * 8192 + 64, 3 * 8192 + 4096})
    for (std::size_t off : {0, 3, 8}) {
      INFO(n << " bytes to " << off << " bytes past a 16-byte boundary");
      std::vector<double> space(src.size() / 8 + 8, 7.5);  // operator new: 16-byte aligned
      auto* dst = reinterpret_cast<unsigned char*>(space.data()) + 16 + off;
      const std::vector<unsigned char> before(reinterpret_cast<unsigned char*>(space.data()),
                                              reinterpret_cast<unsigned char*>(space.data() + space.size()));
      CHECK(rwd::kernel::detail::hash_and_copy(dst, src.data(), n) == XXH3_64bits(src.data(), n));
      rwd::kernel::detail::stream_fence();
      CHECK(std::memcmp(dst, src.data(), n) == 0);
      const auto* all = reinterpret_cast<const unsigned char*>(space.data());
      bool guards = true;  // every byte before and after the copy as it was
      for (std::size_t i = 0; i < before.size(); ++i)
        if ((all + i < dst || all + i >= dst + n) && all[i] != before[i]) guards = false;
      CHECK(guards);
    }
}
