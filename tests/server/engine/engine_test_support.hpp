// Shared by the engine tests: a KV plan with one full-attention group, and a
// request's tokens and finish collected from its callbacks.
#pragma once

#include <future>
#include <memory>
#include <vector>

#include "engine/engine.hpp"

namespace seatrt::engine::test {

inline KvPlan full_plan(int64_t blocks, int32_t block_size, int64_t max_model_len) {
  KvPlan p;
  p.block_size = block_size;
  p.full = KvGroup{0, {0}, 8, 32, blocks};
  p.max_model_len = max_model_len;
  return p;
}

struct Outcome {
  std::vector<int32_t> tokens;
  FinishInfo info;
};

// Submits `r` with on_token/on_finish that collect into the future's
// Outcome (on_token keeps every token); the submit status goes to *status.
inline std::future<Outcome> submit_collecting(Engine& engine, GenerationRequest r, SubmitStatus* status,
                                              int64_t* id = nullptr) {
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto out = std::make_shared<Outcome>();
  r.on_token = [out](const TokenEvent& e) {
    out->tokens.push_back(e.token);
    return true;
  };
  r.on_finish = [out, promise](const FinishInfo& info) {
    out->info = info;
    promise->set_value(*out);
  };
  auto f = promise->get_future();
  *status = engine.submit(std::move(r), id);
  return f;
}

}  // namespace seatrt::engine::test
