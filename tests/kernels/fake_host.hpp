// A minimal host API table for tests and tools that call a provider's table
// directly: statuses are heap objects holding a code and a message.
#pragma once

#include <string>

#include "seatrt/seatrt.h"

namespace seatrt::test {

const seatrt_host_api* fake_host();
// Frees `status` and returns its code and message (SEATRT_OK / "" for NULL).
seatrt_status_code take_status(seatrt_status* status, std::string* message = nullptr);

}  // namespace seatrt::test
