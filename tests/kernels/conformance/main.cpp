// seatrt-conformance: runs every operation kind of a candidate kernel
// provider on random inputs (a fresh seed each run, printed) and compares it
// with a reference provider (the CPU provider), both loaded from their
// plugin files.
//
//   seatrt-conformance --candidate libseatrt_kernels_cuda.so
//                      --reference libseatrt_kernels_cpu.so [--seed N] [--ops linear,moe,graph]
//
// Every case builds seatrt_op values and calls the providers' run(); the
// cases are listed per kind of the SDK's operation registry, and a kind
// without a case makes the tool fail.  The graph cases build Gemma-4
// decoder layers as one seatrt_op_graph: the candidate runs it through
// plan + plan_launch when it has a planner (else node by node, "planned:
// no"), the reference node by node, and every tensor the graph writes is
// compared.  Prints op / case / max relative error / bound /
// PASS|FAIL|SKIP, then the per-kind tally, and exits 1 on any FAIL or kind
// without a case, 2 on bad usage.  SKIP: the candidate's supports()
// answered 0 for an operation, or it reads no weight layout the tool can
// make; a SKIP never counts as passed.  NaN or infinity in an output is a
// FAIL.  Values read back from an F8 cache must be within one E4M3 step of
// the reference's, each.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
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

// Prints the usage (after `problem`, if any) and exits: 0 for --help, 2 for bad usage.
[[noreturn]] void usage(const std::string& problem) {
  std::ostream& out = problem.empty() ? std::cout : std::cerr;
  if (!problem.empty()) out << "seatrt-conformance: " << problem << "\n";
  out << "usage: seatrt-conformance --candidate PLUGIN.so --reference PLUGIN.so [--seed N] [--ops a,b,...]\n"
      << "       [--device N] [--candidate-options TOML] [--reference-options TOML]\n"
      << "  Compares every operation kind of the registry (run()) and whole Gemma-4 layer graphs\n"
      << "  (the candidate's plan + plan_launch) against the reference, on seeded random inputs.\n"
      << "  --ops picks kinds by registry name (rms_norm, moe, ...) and 'graph' for the graph cases;\n"
      << "  the seed is --seed, else SEATRT_TEST_SEED, else fresh (printed).\n";
  std::exit(problem.empty() ? 0 : 2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") usage("");
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

// Every kind of the SDK's registry, in kind order.
std::vector<const seatrt::sdk::OpInfo*> registry_kinds() {
  std::vector<const seatrt::sdk::OpInfo*> kinds;
  for (int32_t k = SEATRT_OP_INVALID + 1; k < SEATRT_OP_KIND_END_2_0; ++k)
    if (const seatrt::sdk::OpInfo* info = seatrt::sdk::op_info(k)) kinds.push_back(info);
  return kinds;
}

// Kinds of the registry that no case covers (SAMPLE included: it has its own cases).
std::vector<std::string> kinds_without_case(const std::vector<Case>& cases) {
  std::vector<std::string> missing;
  for (const seatrt::sdk::OpInfo* info : registry_kinds()) {
    bool covered = false;
    for (const Case& c : cases) covered = covered || c.kind == info->kind;
    if (!covered) missing.push_back(info->name);
  }
  return missing;
}

struct Tally {
  int pass = 0, fail = 0, skip = 0;
};

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
  add_recurrent_cases(cases);
  add_graph_cases(cases);

  int pass = 0, fail = 0, skip = 0;
  std::map<std::string, Tally> per_op;
  std::printf("%-19s %-68s %12s %9s  %s\n", "op", "case", "max rel err", "bound", "result");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string op = c.op();
    if (!opt.ops.empty() && !opt.ops.count(op)) continue;
    const uint32_t case_seed = static_cast<uint32_t>(mix(seed + i));
    Verdict v;
    Outputs cand, ref;
    try {
      std::mt19937 rng(case_seed);
      cand = c.run(*candidate, rng, Role::candidate);
      try {
        std::mt19937 rng_ref(case_seed);
        ref = c.run(*reference, rng_ref, Role::reference);
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
    Tally& t = per_op[op];
    (v.result == "PASS" ? t.pass : v.result == "FAIL" ? t.fail : t.skip)++;
    char err[32];
    if (std::isnan(v.err)) std::snprintf(err, sizeof err, "-");
    else std::snprintf(err, sizeof err, "%.3e", v.err);
    std::printf("%-19s %-68s %12s %9.1e  %s%s%s\n", op.c_str(), c.shape.c_str(), err, c.bound, v.result.c_str(),
                v.note.empty() ? "" : "  ", v.note.c_str());
    std::fflush(stdout);
  }
  std::printf("\nper kind:\n");
  for (const seatrt::sdk::OpInfo* info : registry_kinds()) {
    const auto it = per_op.find(info->name);
    if (it == per_op.end()) continue;
    std::printf("  %-19s %d passed, %d failed, %d skipped\n", info->name, it->second.pass, it->second.fail,
                it->second.skip);
  }
  if (const auto it = per_op.find("graph"); it != per_op.end()) {
    std::printf("  %-19s %d passed, %d failed, %d skipped\n", "graph", it->second.pass, it->second.fail, it->second.skip);
  }
  const std::vector<std::string> missing = kinds_without_case(cases);
  for (const std::string& kind : missing) std::printf("  %-19s no case: this tool does not test the kind\n", kind.c_str());
  std::printf("\n%d passed, %d failed, %d skipped (seed %llu)\n", pass, fail, skip, static_cast<unsigned long long>(seed));
  if (!missing.empty()) {
    std::fprintf(stderr, "seatrt-conformance: %zu kind(s) of the registry have no case; add one (cases.hpp)\n", missing.size());
    return 1;
  }
  return fail ? 1 : 0;
}
