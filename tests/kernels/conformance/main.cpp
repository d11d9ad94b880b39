// seatrt-conformance: runs every operation of a candidate kernel provider on
// random inputs (a fresh seed each run, printed) and compares it with a
// reference provider (the CPU provider), both loaded from their plugin files.
//
//   seatrt-conformance --candidate libseatrt_kernels_cuda.so
//                      --reference libseatrt_kernels_cpu.so [--seed N] [--ops linear,moe]
//
// Prints op / case / max relative error / bound / PASS|FAIL|SKIP and exits 1
// on any FAIL, 2 on bad usage.  SKIP is "not provided": the candidate's slot
// is NULL, or its table is of an older ABI minor and ends before the slot
// (the ABI 1.1/1.2/1.4/1.5 fused operations), or it reads no weight layout the
// tool can make.  A SKIP never counts as passed.  Values read back from an
// F8 cache must be within one E4M3 step of the reference's, each.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "cases.hpp"

using namespace seatrt::conformance;

namespace {

struct Options {
  std::string candidate, reference, candidate_options, reference_options;
  uint64_t seed = 0;
  bool seed_given = false;
  int32_t device = 0;
  std::set<std::string> ops;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "seatrt-conformance: " << problem << "\n"
            << "usage: seatrt-conformance --candidate PLUGIN.so --reference PLUGIN.so [--seed N] [--ops a,b,...]\n"
            << "       [--device N] [--candidate-options TOML] [--reference-options TOML]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--candidate") o.candidate = value();
    else if (arg == "--reference") o.reference = value();
    else if (arg == "--candidate-options") o.candidate_options = value();
    else if (arg == "--reference-options") o.reference_options = value();
    else if (arg == "--device") o.device = static_cast<int32_t>(std::stol(value()));
    else if (arg == "--seed") {
      o.seed = std::stoull(value(), nullptr, 0);
      o.seed_given = true;
    } else if (arg == "--ops") {
      std::stringstream list(value());
      for (std::string op; std::getline(list, op, ',');) o.ops.insert(op);
    } else {
      usage("unknown argument " + arg);
    }
  }
  if (o.candidate.empty() || o.reference.empty()) usage("--candidate and --reference are required");
  return o;
}

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Verdict {
  std::string result;  // PASS, FAIL, SKIP
  double err = 0.0;
  std::string note;
};

Verdict compare(const Outputs& cand, const Outputs& ref, double bound) {
  Verdict v;
  if (cand.exact.size() != ref.exact.size() || cand.approx.size() != ref.approx.size()) {
    return {"FAIL", NAN, "output sizes differ"};
  }
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < ref.exact.size(); ++i) {
    if (!(cand.exact[i] == ref.exact[i])) {
      if (mismatches++ == 0) first = i;
    }
  }
  if (cand.part_ends != ref.part_ends) return {"FAIL", NAN, "output parts differ"};
  // The error of each part (output) relative to its own magnitude; the worst.
  const std::vector<size_t> ends = ref.part_ends.empty() ? std::vector<size_t>{ref.approx.size()} : ref.part_ends;
  bool non_finite = false;
  size_t begin = 0;
  for (const size_t end : ends) {
    double num = 0.0, den = 0.0;
    for (size_t i = begin; i < end && i < ref.approx.size(); ++i) {
      if (!std::isfinite(cand.approx[i]) || !std::isfinite(ref.approx[i])) non_finite = true;
      num = std::max(num, std::fabs(cand.approx[i] - ref.approx[i]));
      den = std::max(den, std::fabs(ref.approx[i]));
    }
    v.err = std::max(v.err, den > 0 ? num / den : (num > 0 ? 1.0 : 0.0));
    begin = end;
  }
  if (begin != ref.approx.size()) return {"FAIL", NAN, "output parts do not cover the outputs"};
  if (cand.e4m3.size() != ref.e4m3.size()) return {"FAIL", NAN, "E4M3 output sizes differ"};
  size_t far = 0, first_far = 0;
  for (size_t i = 0; i < ref.e4m3.size(); ++i) {
    const double c = cand.e4m3[i], r = ref.e4m3[i];
    if (!std::isfinite(c) || !std::isfinite(r)) non_finite = true;
    if (!(std::fabs(c - r) <= e4m3_step(std::max(std::fabs(c), std::fabs(r))))) {
      if (far++ == 0) first_far = i;
    }
  }
  if (non_finite) return {"FAIL", NAN, "NaN or infinity in the outputs"};
  if (far) {
    return {"FAIL", v.err, std::to_string(far) + " E4M3 values more than one step apart (first at " +
                               std::to_string(first_far) + ": " + std::to_string(cand.e4m3[first_far]) + " vs " +
                               std::to_string(ref.e4m3[first_far]) + ")"};
  }
  if (mismatches) {
    return {"FAIL", v.err, std::to_string(mismatches) + " exact outputs differ (first at " + std::to_string(first) + ": " +
                               std::to_string(cand.exact[first]) + " vs " + std::to_string(ref.exact[first]) + ")"};
  }
  v.result = v.err <= bound ? "PASS" : "FAIL";
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  // --seed, else SEATRT_TEST_SEED (how the stress script reruns a failure), else a fresh one.
  const char* env_seed = std::getenv("SEATRT_TEST_SEED");
  const uint64_t seed = opt.seed_given ? opt.seed
                        : env_seed     ? std::stoull(env_seed, nullptr, 0)
                                       : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  std::printf("seed %llu (rerun with --seed %llu)\n", static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::unique_ptr<Provider> candidate, reference;
  try {
    candidate = std::make_unique<Provider>(opt.candidate, opt.candidate_options, opt.device);
    reference = std::make_unique<Provider>(opt.reference, opt.reference_options, 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt-conformance: %s\n", e.what());
    return 2;
  }
  std::printf("candidate %s\nreference %s\n\n", candidate->label().c_str(), reference->label().c_str());

  std::vector<Case> cases;
  add_basic_cases(cases);
  add_matrix_cases(cases);
  add_attention_cases(cases);
  add_sample_cases(cases);
  add_fused_cases(cases);
  add_qkv_cases(cases);
  add_route_cases(cases);

  int pass = 0, fail = 0, skip = 0;
  std::printf("%-19s %-68s %12s %9s  %s\n", "op", "case", "max rel err", "bound", "result");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    if (!opt.ops.empty() && !opt.ops.count(c.op)) continue;
    const uint32_t case_seed = static_cast<uint32_t>(mix(seed + i));
    Verdict v;
    Outputs cand, ref;
    try {
      std::mt19937 rng(case_seed);
      cand = c.run(*candidate, rng);
      try {
        std::mt19937 rng_ref(case_seed);
        ref = c.run(*reference, rng_ref);
        v = compare(cand, ref, c.bound);
      } catch (const std::exception& e) {
        v = {"FAIL", NAN, std::string("reference: ") + e.what()};
      }
    } catch (const Skip& e) {
      v = {"SKIP", NAN, e.what()};
    } catch (const std::exception& e) {
      v = {"FAIL", NAN, e.what()};
    }
    (v.result == "PASS" ? pass : v.result == "FAIL" ? fail : skip)++;
    char err[32];
    if (std::isnan(v.err)) std::snprintf(err, sizeof err, "-");
    else std::snprintf(err, sizeof err, "%.3e", v.err);
    std::printf("%-19s %-68s %12s %9.1e  %s%s%s\n", c.op.c_str(), c.shape.c_str(), err, c.bound, v.result.c_str(),
                v.note.empty() ? "" : "  ", v.note.c_str());
    std::fflush(stdout);
  }
  std::printf("\n%d passed, %d failed, %d skipped (seed %llu)\n", pass, fail, skip, static_cast<unsigned long long>(seed));
  return fail ? 1 : 0;
}
