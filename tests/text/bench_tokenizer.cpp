// Benchmark (not a test): encode a long prompt with the tokenizer.json loader.
//   bench_tokenizer TOKENIZER.json TEXT_FILE [REPEATS]
// Prints tokens, best seconds and MB/s as one JSON line (tools/text/bench_tokenizer.py
// runs it beside the Hugging Face tokenizers library on the same text).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "seatrt/text/hf_tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_tokenizer TOKENIZER.json TEXT_FILE [REPEATS]\n");
    return 2;
  }
  try {
    const auto tok = seatrt::text::load_hf_tokenizer(argv[1]);
    std::ifstream in(argv[2], std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
    double best = 1e30;
    size_t tokens = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      tokens = tok->encode(text, false).size();
      const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      best = std::min(best, dt.count());
    }
    std::printf("{\"impl\": \"seatrt\", \"bytes\": %zu, \"tokens\": %zu, \"seconds\": %.4f, \"mb_per_s\": %.2f}\n",
                text.size(), tokens, best, static_cast<double>(text.size()) / 1e6 / best);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tokenizer: %s\n", e.what());
    return 1;
  }
}
