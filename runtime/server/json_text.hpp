// JSON as the server writes it to a client.  Text in a response can carry
// bytes that are not UTF-8 (a parse error quoting the request's bytes, a
// token's raw bytes); nlohmann's plain dump() throws on them, so every
// response body and event is written with invalid bytes replaced by U+FFFD.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace seatrt::server {

template <class Json>
std::string json_text(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace seatrt::server
