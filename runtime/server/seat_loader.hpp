// Builds a servable seat from its validated config: plugins, kernel
// context, model (checkpoint -> quantization -> architecture), tokenizer
// and chat template, the KV pool planned in bytes and checked against the
// device's free memory, the engine.  Tears down in the reverse order.
#pragma once

#include <memory>

#include "seat_runtime.hpp"
#include "seatrt/host/seat_config.hpp"

namespace seatrt::server {

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
