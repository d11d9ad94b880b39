// The host API table: status objects and the Error bridge.
#include <catch2/catch.hpp>

#include "seatrt/host/status.hpp"

using namespace seatrt::host;

TEST_CASE("host_api reports this host's ABI version and a full table") {
  const seatrt_host_api* api = host_api();
  CHECK(api->struct_size == sizeof(seatrt_host_api));
  CHECK(api->abi_major == SEATRT_ABI_MAJOR);
  CHECK(api->abi_minor == SEATRT_ABI_MINOR);
  CHECK(api->status_create != nullptr);
  CHECK(api->log != nullptr);
}

TEST_CASE("statuses carry code and a copied message") {
  const seatrt_host_api* api = host_api();
  std::string text = "tensor 'x' missing";
  seatrt_status* s = api->status_create(SEATRT_ERR_NOT_FOUND, text.c_str());
  text = "changed";  // the status must have copied it
  CHECK(api->status_code(s) == SEATRT_ERR_NOT_FOUND);
  CHECK(std::string(api->status_message(s)) == "tensor 'x' missing");
  api->status_free(s);
  CHECK(api->status_code(nullptr) == SEATRT_OK);
  CHECK(std::string(api->status_message(nullptr)).empty());
  api->status_free(nullptr);  // allowed
  seatrt_status* empty = api->status_create(SEATRT_ERR_INTERNAL, nullptr);
  CHECK(std::string(api->status_message(empty)).empty());
  api->status_free(empty);
}

TEST_CASE("throw_if_error frees the status and throws its code and message") {
  CHECK_NOTHROW(throw_if_error(nullptr));
  seatrt_status* s = host_api()->status_create(SEATRT_ERR_INVALID_ARG, "bad shape");
  try {
    throw_if_error(s, "linear");
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.code() == SEATRT_ERR_INVALID_ARG);
    CHECK(std::string(e.what()) == "linear: bad shape");
  }
  CHECK(take_status_message(host_api()->status_create(SEATRT_ERR_CANCELLED, "")) == "cancelled");
}

TEST_CASE("log accepts NULL strings without crashing") {
  host_api()->log(SEATRT_LOG_DEBUG, nullptr, nullptr);
  host_api()->log(SEATRT_LOG_ERROR, "p", "an error line");
  SUCCEED("no crash");
}
