// The C API's statuses for the kernel's errors: every FileError a call can meet comes back
// as the documented status (rewind.h), never as REWIND_ERR_INTERNAL ("a bug: please
// report"), with the kernel's message. A full disk is REWIND_ERR_IO ("disk full").
#include <catch2/catch.hpp>

#include <string>

#include "handles.hpp"

namespace {

int status_of(k::ErrorKind kind) {
  return rwd::api::guarded([&] { throw k::FileError(kind, "out.h5", "it went wrong"); });
}

}  // namespace

TEST_CASE("a full disk is REWIND_ERR_IO, with the kernel's message", "[api]") {
  CHECK(status_of(k::ErrorKind::no_space) == REWIND_ERR_IO);
  CHECK(std::string(rewind_last_error()).find("out.h5") != std::string::npos);
}

TEST_CASE("every kernel error kind has a documented status", "[api]") {
  using K = k::ErrorKind;
  CHECK(status_of(K::not_found) == REWIND_ERR_NOT_FOUND);
  for (const K kind : {K::not_hdf5, K::not_rewind, K::newer_version, K::missing_object, K::bad_shape})
    CHECK(status_of(kind) == REWIND_ERR_FORMAT);
  CHECK(status_of(K::truncated) == REWIND_ERR_CORRUPT);
  CHECK(status_of(K::corrupt) == REWIND_ERR_CORRUPT);
  CHECK(status_of(K::no_such_step) == REWIND_ERR_NO_SUCH_STEP);
  CHECK(status_of(K::io) == REWIND_ERR_IO);
  CHECK(status_of(K::claimed) == REWIND_ERR_CLAIMED);
  CHECK(status_of(K::invalid_argument) == REWIND_ERR_ARGUMENT);
}
