// Builds a servable seat from its validated config: plugins, kernel
// context, model (checkpoint -> quantization -> architecture), tokenizer
// and chat template, the KV pool planned in bytes and checked against the
// device's free memory, the engine.  Tears down in the reverse order.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "seat_runtime.hpp"
#include "seatrt/host/seat_config.hpp"

namespace seatrt::server {

// The text files a seat reads: the tokenizer ([model] tokenizer, else the
// checkpoint's tokenizer.json), tokenizer_config.json beside it ("" when
// absent) and the chat template ([model] chat_template, else the
// checkpoint's chat_template.jinja; it may not exist, and then
// /v1/chat/completions is unavailable).
struct SeatTextFiles {
  std::filesystem::path tokenizer;
  std::string tokenizer_config;
  std::filesystem::path chat_template;
};
SeatTextFiles seat_text_files(const host::SeatConfig& seat);

// Reads and parses the seat's tokenizer and chat template (as load() does),
// for `seatrt check`; writes one line for each.  Throws naming the file.
void check_seat_text(const host::SeatConfig& seat, std::ostream& out);

// What serve needs of [server] besides the config's own checks: host an IP
// address, api_key_env set in the environment.  Throws std::runtime_error
// naming the key (check and serve alike).  Returns the API key, or nullopt.
std::optional<std::string> check_seat_server(const host::SeatConfig& seat);

class LoadedSeat {
 public:
  // Throws (one line naming the key, file or plugin) on any failure.
  static std::unique_ptr<LoadedSeat> load(const host::SeatConfig& seat);
  ~LoadedSeat();
  LoadedSeat(const LoadedSeat&) = delete;
  LoadedSeat& operator=(const LoadedSeat&) = delete;

  SeatRuntime& runtime() { return runtime_; }

 private:
  struct Parts;
  LoadedSeat();
  std::unique_ptr<Parts> parts_;
  SeatRuntime runtime_;
};

}  // namespace seatrt::server
