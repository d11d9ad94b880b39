// `seatrt eval MODEL_DIR --tokens ID,ID,...`: runs a checkpoint on given
// token ids through the real pipeline (checkpoint -> quantization plugin ->
// architecture plugin -> kernel provider), prints the greedy continuation,
// and can write the logits of every prompt position so that any checkpoint
// can be compared with a reference outside the test suite.
//
// --logits-out FILE: one line of JSON ({"dtype":"float32","shape":[T,V],...})
// then T*V little-endian float32 values, row-major.
#include <cmath>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "seatrt/model/model_session.hpp"
#include "seatrt/model/sequence_driver.hpp"

namespace seatrt::cli {
namespace {

struct EvalOptions {
  std::filesystem::path model_dir;
  std::vector<int32_t> tokens;
  std::string kernels = "auto";
  int32_t greedy = 16;
  std::filesystem::path logits_out;
  std::vector<std::filesystem::path> plugin_paths;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<int32_t> parse_tokens(const std::string& text) {
  std::vector<int32_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int32_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0)
      throw UsageError("--tokens: '" + item + "' is not a token id (comma-separated non-negative integers)");
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

EvalOptions parse(std::span<const std::string> args) {
  EvalOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--tokens") {
      o.tokens = parse_tokens(value());
    } else if (a == "--kernels") {
      o.kernels = value();
    } else if (a == "--greedy") {
      const std::string& v = value();
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), o.greedy);
      if (ec != std::errc() || end != v.data() + v.size() || o.greedy < 0 || o.greedy > 100000)
        throw UsageError("--greedy: '" + v + "' is not a count");
    } else if (a == "--logits-out") {
      o.logits_out = value();
    } else if (a == "--plugin-path") {
      o.plugin_paths.push_back(std::filesystem::absolute(value()));
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a);
    } else if (o.model_dir.empty()) {
      o.model_dir = a;
    } else {
      throw UsageError("unexpected argument " + a);
    }
  }
  if (o.model_dir.empty()) throw UsageError("MODEL_DIR is required");
  if (o.tokens.empty()) throw UsageError("--tokens is required");
  return o;
}

void write_logits(const std::filesystem::path& path, const std::vector<float>& logits, std::size_t rows,
                  std::size_t vocab) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path.string() + ": cannot write");
  out << "{\"dtype\":\"float32\",\"shape\":[" << rows << "," << vocab
      << "],\"order\":\"row-major\",\"endianness\":\"little\"}\n";
  // The host is little-endian (x86-64/aarch64 Linux): floats are written as is.
  out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * sizeof(float)));
  if (!out) throw std::runtime_error(path.string() + ": write failed");
}

int run_eval(std::span<const std::string> args) {
  EvalOptions o;
  try {
    o = parse(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr,
                 "seatrt eval: %s\nusage: seatrt eval MODEL_DIR --tokens ID,ID,... [--kernels cpu|cuda|auto] "
                 "[--greedy N] [--logits-out FILE] [--plugin-path DIR]\n",
                 e.what());
    return 2;
  }
  try {
    model::ModelSession session(o.plugin_paths, o.kernels);
    const auto max_tokens = static_cast<int64_t>(o.tokens.size()) + o.greedy + 1;
    const model::LoadedModel& loaded = session.load(o.model_dir, max_tokens);
    const auto result = model::run_greedy(loaded, o.tokens, o.greedy);
    std::cout << "model: " << o.model_dir.string() << " (architecture " << loaded.prepared().arch_name()
              << ", quantization " << (loaded.prepared().quant_name().empty() ? "none" : loaded.prepared().quant_name())
              << ", kernels " << session.plugins().kernels->name() << ")\n";
    std::cout << "device bytes: weights " << loaded.info().weight_bytes << ", workspace " << loaded.info().workspace_bytes
              << "\n";
    std::cout << "prompt tokens: " << o.tokens.size() << "\n";
    std::cout << "greedy:";
    for (std::size_t i = 0; i < result.greedy.size(); ++i) std::cout << (i ? "," : " ") << result.greedy[i];
    std::cout << "\n";
    const auto vocab = static_cast<std::size_t>(loaded.info().vocab_size);
    if (!o.logits_out.empty()) {
      write_logits(o.logits_out, result.prompt_logits, o.tokens.size(), vocab);
      std::cout << "logits: " << o.logits_out.string() << " [" << o.tokens.size() << ", " << vocab << "] float32\n";
    }
    // A greedy argmax over NaN still prints ids: say so and fail.
    const auto bad = std::find_if(result.prompt_logits.begin(), result.prompt_logits.end(),
                                  [](float v) { return !std::isfinite(v); });
    if (bad != result.prompt_logits.end()) {
      const auto at = static_cast<std::size_t>(bad - result.prompt_logits.begin());
      std::fprintf(stderr, "seatrt eval: error: the prompt's logits are not finite (first at position %zu, token %zu)\n",
                   at / vocab, at % vocab);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt eval: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("eval",
                   "eval MODEL_DIR --tokens ID,... [--kernels cpu|cuda|auto] [--greedy N] [--logits-out FILE] "
                   "[--plugin-path DIR]",
                   "run a checkpoint on token ids: greedy continuation and logits", seatrt::cli::run_eval)
