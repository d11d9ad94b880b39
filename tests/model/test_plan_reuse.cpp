// forward() plans a repeating step once: decode steps of one shape at fixed
// addresses (shape_repeats = 1) make one plan() call and replay it, and the
// replays give the logits that one-off steps (shape_repeats = 0) give.  The
// plugin's kernel table is wrapped to count plan() calls.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "fixture_support.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::test {
namespace {

// The CPU table with plan() counted.  Plans go to the wrapped table's
// planner when it has one, else to a plan of our own that runs the graph's
// nodes through run() (the graph stays alive until plan_destroy).
struct CountingTable {
  static inline const seatrt_kernel_api* inner = nullptr;
  static inline int plans = 0;
  struct Plan {
    seatrt_plan* inner = nullptr;
    const seatrt_op_graph* graph = nullptr;
    std::vector<seatrt_op> nodes;
  };

  static seatrt_status* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph, seatrt_plan** out) {
    ++plans;
    auto p = std::make_unique<Plan>();
    if (inner->plan) {
      if (seatrt_status* st = inner->plan(ctx, graph, &p->inner)) return st;
    } else {
      p->nodes.assign(graph->nodes, graph->nodes + graph->num_nodes);
    }
    *out = reinterpret_cast<seatrt_plan*>(p.release());
    return nullptr;
  }
  static seatrt_status* launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* plan) {
    auto* p = reinterpret_cast<Plan*>(plan);
    if (p->inner) return inner->plan_launch(ctx, stream, p->inner);
    for (const seatrt_op& op : p->nodes)
      if (seatrt_status* st = inner->run(ctx, stream, &op)) return st;
    return nullptr;
  }
  static void destroy(seatrt_kernel_context* ctx, seatrt_plan* plan) {
    auto* p = reinterpret_cast<Plan*>(plan);
    if (p && p->inner) inner->plan_destroy(ctx, p->inner);
    delete p;
  }
  static seatrt_kernel_api wrap(const seatrt_kernel_api* table) {
    inner = table;
    plans = 0;
    seatrt_kernel_api t = *table;
    t.plan = plan;
    t.plan_launch = launch;
    t.plan_destroy = destroy;
    t.plan_describe = nullptr;
    return t;
  }
};

// One sequence decoded a token at a time through inputs at fixed device
// addresses (what a host's decode bucket gives), max_seq_len fixed.
class FixedDecode {
 public:
  static constexpr int32_t kBlock = 16, kMaxLen = 32;

  explicit FixedDecode(const model::LoadedModel& m) : m_(m), k_(m.kernels()), ctx_(m.kernel_context()) {
    const int dk = k_->device_kind;
    const auto i32 = [&](std::initializer_list<int64_t> shape, std::size_t n) {
      return sdk::contiguous_tensor(alloc(n * 4), SEATRT_DTYPE_I32, shape, dk);
    };
    ids_ = i32({1}, 1);
    pos_ = i32({1}, 1);
    qs_ = i32({2}, 2);
    sl_ = i32({1}, 1);
    bt_ = i32({1, kMaxLen / kBlock}, kMaxLen / kBlock);
    li_ = i32({1}, 1);
    slots_ = sdk::contiguous_tensor(alloc(8), SEATRT_DTYPE_I64, {1}, dk);
    const int64_t vocab = m.info().vocab_size;
    logits_ = sdk::contiguous_tensor(alloc(static_cast<std::size_t>(vocab) * 4), SEATRT_DTYPE_F32, {1, vocab}, dk);
    for (int32_t l = 0; l < m.info().num_layers; ++l) {
      const auto& spec = m.info().kv_layers[l];
      const std::size_t bytes = static_cast<std::size_t>(kMaxLen * spec.kv_heads * spec.head_dim) * 4;
      seatrt_kv_layer kv{};
      kv.struct_size = sizeof(kv);
      kv.block_size = kBlock;
      kv.k_cache = sdk::contiguous_tensor(alloc(bytes), SEATRT_DTYPE_F32,
                                          {kMaxLen / kBlock, kBlock, spec.kv_heads, spec.head_dim}, dk);
      kv.v_cache = sdk::contiguous_tensor(alloc(bytes), SEATRT_DTYPE_F32,
                                          {kMaxLen / kBlock, kBlock, spec.kv_heads, spec.head_dim}, dk);
      kv.k_scale = kv.v_scale = 1.0f;
      kv_.push_back(kv);
    }
    std::vector<int32_t> table(kMaxLen / kBlock);
    std::iota(table.begin(), table.end(), 0);
    put(bt_, table.data(), table.size() * 4);
    const int32_t zero = 0, start[2] = {0, 1};
    put(li_, &zero, 4);
    put(qs_, start, 8);
  }
  ~FixedDecode() {
    for (void* p : allocations_) k_->free_memory(ctx_, p);
  }

  // The logits of `token` fed at the next position.
  std::vector<float> step(int32_t token, bool repeats) {
    const int32_t position = length_++;
    const int32_t seq_len = length_;
    const int64_t slot = position;
    put(ids_, &token, 4);
    put(pos_, &position, 4);
    put(sl_, &seq_len, 4);
    put(slots_, &slot, 8);
    const int32_t host_qs[2] = {0, 1};
    seatrt_forward_batch b{};
    b.struct_size = sizeof(b);
    b.num_tokens = 1;
    b.num_seqs = 1;
    b.max_query_len = 1;
    b.max_seq_len = kMaxLen;
    b.num_logits = 1;
    b.token_ids = &ids_;
    b.positions = &pos_;
    b.query_start = &qs_;
    b.seq_lens = &sl_;
    b.block_tables = &bt_;
    b.slot_mapping = &slots_;
    b.logits_index = &li_;
    b.kv_layers = kv_.data();
    b.host_query_start = host_qs;
    b.host_seq_lens = &seq_len;
    b.logits = &logits_;
    b.shape_repeats = repeats ? 1 : 0;
    check(m_.arch().forward(m_.model(), nullptr, &b));
    std::vector<float> out(static_cast<std::size_t>(m_.info().vocab_size));
    check(k_->copy(ctx_, nullptr, out.data(), SEATRT_DEVICE_CPU, logits_.data, k_->device_kind, out.size() * 4));
    check(k_->stream_sync(ctx_, nullptr));
    return out;
  }

 private:
  void check(seatrt_status* st) const {
    if (!st) return;
    const std::string message = m_.host()->status_message(st);
    m_.host()->status_free(st);
    FAIL(message);
  }
  void* alloc(std::size_t bytes) {
    void* p = nullptr;
    check(k_->alloc(ctx_, bytes, &p));
    allocations_.push_back(p);
    check(k_->memset_zero(ctx_, nullptr, p, bytes));
    return p;
  }
  void put(const seatrt_tensor& t, const void* host, std::size_t bytes) {
    check(k_->copy(ctx_, nullptr, t.data, k_->device_kind, host, SEATRT_DEVICE_CPU, bytes));
  }

  const model::LoadedModel& m_;
  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  int32_t length_ = 0;
  seatrt_tensor ids_{}, pos_{}, qs_{}, sl_{}, bt_{}, li_{}, slots_{}, logits_{};
  std::vector<seatrt_kv_layer> kv_;
  std::vector<void*> allocations_;
};

TEST_CASE("a repeated decode shape is planned once and its replays equal one-off steps", "[plan]") {
  const auto dir = fixture("gemma4-tiny-moe");
  auto session = cpu_session();
  const auto& one_off = session->load(dir, 64);

  host::SeatConfig seat;
  seat.plugins.search_paths = {plugin_dir()};
  seat.kernels.provider = "cpu";
  const model::ModelLoader loader(host::host_api(), model::model_plugin_candidates(seat, session->plugins()));
  const seatrt_kernel_api counted = CountingTable::wrap(one_off.kernels());
  const auto replayed = loader.load(loader.prepare(dir), &counted, one_off.kernel_context(), 64);

  FixedDecode a(*replayed), b(one_off);
  const std::vector<int32_t> tokens{2, 17, 5, 99, 31, 8, 64, 3, 12, 40};
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    INFO("step " << i);
    const auto planned = a.step(tokens[i], /*repeats=*/true);
    const auto once = b.step(tokens[i], /*repeats=*/false);
    REQUIRE(planned.size() == once.size());
    double worst = 0, scale = 0;
    for (std::size_t j = 0; j < once.size(); ++j) {
      worst = std::max(worst, std::fabs(static_cast<double>(planned[j]) - once[j]));
      scale = std::max(scale, std::fabs(static_cast<double>(once[j])));
    }
    CHECK(scale > 0);
    CHECK(worst <= 1e-6 * scale);
    CHECK(CountingTable::plans == 1);
  }

  // Another address set is another graph; the first is still cached.
  FixedDecode other(*replayed);
  other.step(tokens[0], true);
  CHECK(CountingTable::plans == 2);
  a.step(tokens[0], true);
  CHECK(CountingTable::plans == 2);
}

// `seatrt check`'s view: three graphs (decode of 1 and of max_seqs
// sequences, a prefill chunk), each with its node count, its stages
// adding up to that count, and the plan's lines.
TEST_CASE("describe_steps reports the decode and prefill graphs by stage", "[plan]") {
  auto session = cpu_session();
  const auto& loaded = session->load(fixture("gemma4-tiny-moe"), 64);
  REQUIRE(loaded.arch().describe_steps != nullptr);
  std::vector<std::string> lines;
  const seatrt_report_fn collect = [](void* user, const char* line) {
    static_cast<std::vector<std::string>*>(user)->emplace_back(line);
  };
  REQUIRE(loaded.arch().describe_steps(loaded.model(), 4, collect, &lines) == nullptr);
  std::vector<std::string> headers;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("graph ")) continue;
    headers.push_back(lines[i].substr(0, lines[i].find(':')));
    const int nodes = std::stoi(lines[i].substr(lines[i].find(": ") + 2));
    REQUIRE(i + 2 < lines.size());
    const std::string& stages = lines[i + 1];
    REQUIRE(stages.starts_with("  stages: embed 2, attention "));
    int sum = 0;
    for (std::size_t at = stages.find_first_of("0123456789"); at != std::string::npos;
         at = stages.find_first_of("0123456789", stages.find_first_not_of("0123456789", at)))
      sum += std::stoi(stages.substr(at));
    CHECK(sum == nodes);
    CHECK(lines[i + 2].starts_with("  plan: "));
  }
  CHECK(headers == std::vector<std::string>{"graph decode b=1", "graph decode b=4", "graph prefill t=64"});
}

}  // namespace
}  // namespace seatrt::test
