#include "engine_fixture_run.hpp"

#include <future>
#include <memory>
#include <stdexcept>

#include "engine/abi_model_runner.hpp"
#include "engine/engine.hpp"

namespace seatrt::test {

EngineRun run_engine_greedy(const model::LoadedModel& loaded, const std::vector<std::vector<int32_t>>& prompts,
                            int32_t new_tokens, engine::KvDtype kv_dtype, bool repeat_decode) {
  const auto& info = loaded.info();
  engine::KvPlanInput in;
  for (int32_t l = 0; l < info.num_layers; ++l) {
    const auto& s = info.kv_layers[l];
    in.layers.push_back({s.kv_heads, s.head_dim, s.window, s.single_tensor != 0});
  }
  in.dtype = kv_dtype;
  in.block_size = 16;
  in.max_model_len = 256;
  in.max_num_seqs = static_cast<int32_t>(prompts.size());
  in.max_num_batched_tokens = 256;
  const engine::KvPlan plan = engine::plan_kv_pool(in, engine::kv_bytes_for_context_multiple(in, 4.0));

  engine::AbiModel abi;
  abi.host = loaded.host();
  abi.arch = &loaded.arch();
  abi.model = loaded.model();
  abi.kernels = loaded.kernels();
  abi.context = loaded.kernel_context();
  abi.vocab_size = info.vocab_size;
  abi.layers = in.layers;
  auto runner = std::make_unique<engine::AbiModelRunner>(abi, plan, in.max_num_batched_tokens, in.max_num_seqs,
                                                         in.max_model_len, repeat_decode);
  const engine::AbiModelRunner* runner_view = runner.get();
  engine::EngineConfig config;
  config.scheduler = {in.max_num_seqs, in.max_num_batched_tokens, 64};
  config.max_model_len = in.max_model_len;
  config.prefix_caching = false;

  EngineRun run;
  run.tokens.resize(prompts.size());
  run.logprobs.resize(prompts.size());
  run.errors.resize(prompts.size());
  engine::Engine eng(config, plan, std::move(runner));
  std::vector<std::future<engine::FinishInfo>> done;
  for (size_t p = 0; p < prompts.size(); ++p) {
    auto promise = std::make_shared<std::promise<engine::FinishInfo>>();
    done.push_back(promise->get_future());
    engine::GenerationRequest r;
    r.prompt = prompts[p];
    r.max_new_tokens = new_tokens;
    r.sampling.temperature = 0.0f;
    r.sampling.num_top_logprobs = 2;
    r.on_token = [&run, p](const engine::TokenEvent& e) {
      run.tokens[p].push_back(e.token);
      run.logprobs[p].push_back(e.logprob);
      return true;
    };
    r.on_finish = [promise](const engine::FinishInfo& f) { promise->set_value(f); };
    if (eng.submit(std::move(r), nullptr) != engine::SubmitStatus::accepted)
      throw std::runtime_error("the engine refused a fixture prompt");
  }
  for (size_t p = 0; p < done.size(); ++p) {
    const auto f = done[p].get();
    if (f.reason != engine::FinishReason::length) run.errors[p] = f.error.empty() ? "did not finish by length" : f.error;
  }
  run.repeating_steps = runner_view->repeating_steps();
  run.repeating_shapes = runner_view->repeating_shapes();
  return run;
}

}  // namespace seatrt::test
