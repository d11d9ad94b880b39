#include "profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <toml++/toml.h>

#include "context.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::cuda {

namespace {

[[noreturn]] void bad_option(const std::string& what) {
  throw sdk::Error(SEATRT_ERR_INVALID_ARG, "cuda: [kernels.options] " + what);
}

}  // namespace

ProfileOptions parse_profile_options(const char* options_toml) {
  ProfileOptions o;
  if (options_toml && *options_toml) {
    toml::table table;
    try {
      table = toml::parse(options_toml);
    } catch (const toml::parse_error& e) {
      bad_option("is not valid TOML (line " + std::to_string(e.source().begin.line) + ", column " +
                 std::to_string(e.source().begin.column) + "): " + std::string(e.description()));
    }
    for (const auto& [key, value] : table) {
      if (key.str() == "profile") {
        if (!value.is_boolean()) bad_option("profile must be true or false");
        o.enabled = *value.value<bool>();
      } else if (key.str() == "profile_file") {
        if (!value.is_string() || value.value<std::string>()->empty())
          bad_option("profile_file must be a non-empty string (a path)");
        o.file = *value.value<std::string>();
      } else {
        bad_option("has unknown option '" + std::string(key.str()) + "' (the cuda provider knows: profile, profile_file)");
      }
    }
  }
  if (const char* env = std::getenv("SEATRT_CUDA_PROFILE"); env && std::string(env) == "1") o.enabled = true;
  if (const char* env = std::getenv("SEATRT_CUDA_PROFILE_FILE"); env && *env) o.file = env;
  return o;
}

Profiler* profiler_of(seatrt_kernel_context* ctx) { return ctx ? ctx->profiler : nullptr; }

Profiler::Profiler(ProfileOptions options, int32_t pairs) : options_(std::move(options)) {
  start_.assign(static_cast<size_t>(pairs), nullptr);
  stop_.assign(static_cast<size_t>(pairs), nullptr);
  for (size_t i = 0; i < start_.size(); ++i) {
    check(cudaEventCreate(&start_[i]), "cudaEventCreate (profile pool)");
    check(cudaEventCreate(&stop_[i]), "cudaEventCreate (profile pool)");
  }
  pending_.reserve(start_.size());
}

Profiler::~Profiler() {
  for (size_t i = 0; i < start_.size(); ++i) {
    if (start_[i]) cudaEventDestroy(start_[i]);
    if (stop_[i]) cudaEventDestroy(stop_[i]);
  }
  cudaGetLastError();
}

int64_t Profiler::begin(cudaStream_t stream, const OpKey& key) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (capture != cudaStreamCaptureStatusNone) return -1;
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.size() == start_.size()) resolve_locked();
  const auto pair = static_cast<int32_t>(pending_.size());
  if (cudaEventRecord(start_[static_cast<size_t>(pair)], stream) != cudaSuccess) {
    cudaGetLastError();
    ++dropped_;
    return -1;
  }
  Pending p{key, pair, false};
  const auto ordinal = stream_ordinal_.try_emplace(stream, static_cast<int32_t>(stream_ordinal_.size()));
  p.key.stream = ordinal.first->second;
  pending_.push_back(p);
  return generation_ * static_cast<int64_t>(start_.size()) + pair;
}

void Profiler::end(cudaStream_t stream, int64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto cap = static_cast<int64_t>(start_.size());
  // The pool may have been resolved in between (another thread filled it):
  // then this pair is gone and was counted as dropped.
  if (ticket < 0 || ticket / cap != generation_) return;
  const auto pair = static_cast<size_t>(ticket % cap);
  if (pair >= pending_.size() || pending_[pair].ended) return;
  if (cudaEventRecord(stop_[pair], stream) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  pending_[pair].ended = true;
}

void Profiler::resolve_locked() {
  for (const Pending& p : pending_) {
    const auto i = static_cast<size_t>(p.pair);
    float ms = 0;
    if (!p.ended || cudaEventSynchronize(stop_[i]) != cudaSuccess ||
        cudaEventElapsedTime(&ms, start_[i], stop_[i]) != cudaSuccess) {
      cudaGetLastError();
      ++dropped_;
      continue;
    }
    Stats& s = stats_[p.key];
    ++s.count;
    s.total_ms += static_cast<double>(ms);
  }
  pending_.clear();
  ++generation_;
}

void Profiler::dump() {
  std::lock_guard<std::mutex> lock(mutex_);
  resolve_locked();
  std::vector<std::pair<OpKey, Stats>> rows(stats_.begin(), stats_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total_ms > b.second.total_ms; });
  double total = 0;
  for (const auto& r : rows) total += r.second.total_ms;
  std::fprintf(stderr, "cuda profile: GPU time per op (event pairs around each op slot; %lld dropped), %.3f ms in all\n",
               static_cast<long long>(dropped_), total);
  std::fprintf(stderr, "  %6s %-14s %-8s %7s %7s %7s %9s %11s %9s\n", "stream", "op", "variant", "out", "in", "rows",
               "count", "total ms", "mean us");
  for (const auto& [k, s] : rows)
    std::fprintf(stderr, "  %6d %-14s %-8s %7lld %7lld %7lld %9lld %11.3f %9.2f\n", k.stream, k.op, k.variant,
                 static_cast<long long>(k.out_features), static_cast<long long>(k.in_features),
                 static_cast<long long>(k.rows), static_cast<long long>(s.count), s.total_ms,
                 1000.0 * s.total_ms / static_cast<double>(s.count));
  if (options_.file.empty()) return;
  std::ofstream f(options_.file);
  f << "# stream\top\tvariant\tout_features\tin_features\trows\tcount\ttotal_ms\tmean_us\n";
  for (const auto& [k, s] : rows)
    f << k.stream << '\t' << k.op << '\t' << (*k.variant ? k.variant : "-") << '\t' << k.out_features << '\t' << k.in_features << '\t'
      << k.rows << '\t' << s.count << '\t' << s.total_ms << '\t' << 1000.0 * s.total_ms / static_cast<double>(s.count)
      << '\n';
  if (!f) std::fprintf(stderr, "cuda profile: could not write %s\n", options_.file.c_str());
}

}  // namespace seatrt::cuda
