// An error the client sees, in the OpenAI error shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace seatrt::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = "")
      : std::runtime_error(message), status_(status), type_(std::move(type)), param_(std::move(param)),
        message_(message) {}
  int status() const { return status_; }
  // The whole message: what() stops at a NUL a client's string may carry.
  const std::string& message() const { return message_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }
  // Response headers the status needs (RFC 9110: WWW-Authenticate on 401,
  // Allow on 405).
  ApiError&& with_header(std::string name, std::string value) && {
    headers_.emplace_back(std::move(name), std::move(value));
    return std::move(*this);
  }
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }

  nlohmann::json to_json() const {
    nlohmann::json e = {{"message", message_}, {"type", type_}, {"code", status_}};
    e["param"] = param_.empty() ? nlohmann::json(nullptr) : nlohmann::json(param_);
    return {{"error", e}};
  }

 private:
  int status_;
  std::string type_;
  std::string param_;
  std::string message_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

inline ApiError bad_request(const std::string& message, const std::string& param = "") {
  return ApiError(400, "BadRequestError", message, param);
}

}  // namespace seatrt::server
