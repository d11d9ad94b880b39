#!/bin/bash
# Issue 7: step profiles of the full-size synthetic checkpoint under several
# environments, then (NCU_ENVS, optional) the isolated duration of the
# kernels matching NCU_KERNELS in one batch-1 decode step under ncu for each
# environment of NCU_ENVS.  From the repository root, with the carry of
# tools/bench/make_all_carry.sh ($1, default build-e2e/carry).
# Environment: PROFILE_ENVS (';'-separated lists of VAR=value, "default" for
# none), BATCHES (1,8,16,32), PROFILE_EACH (30 s), PREFILL_TIME (0; P > 0:
# each environment also times prefills of P tokens, e.g. 8192 to compare
# SEATRT_ROUTE=groups with the default at prefill), NCU_ENVS, NCU_KERNELS
# (an ncu regex), NCU_LIMIT (90 s each), KERNEL_OPTIONS (TOML for the
# provider, e.g. 'prefill_bf16 = true' as the server benchmarks pass it).
set -u
c=${1:-build-e2e/carry}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
plugin=$c/plugins/libseatrt_kernels_cuda.so
t0=$(date +%s)
stamp() { echo "== $1 (t=$(( $(date +%s) - t0 )) s)"; }
dir=/dev/shm/synth-env
trap 'rm -rf "$dir"' EXIT
stamp "synthetic checkpoint"
timeout 45 python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" > "$out/synth_gen.log" 2>&1
echo "generate exit: $?"
run_env() {  # $1: environment ("default" or VAR=value ...), then the command
  local e=$1; shift
  local vars=(); [ "$e" != default ] && read -ra vars <<< "$e"
  env "${vars[@]}" "$@"
}
IFS=';' read -ra envs <<< "${PROFILE_ENVS:-default}"
for e in "${envs[@]}"; do
  stamp "step profile, environment: $e"
  log="$out/profile_${e//[^A-Za-z0-9]/_}.log"
  run_env "$e" timeout "${PROFILE_EACH:-30}" "$c/bin/seatrt-step-profile" "$dir" --provider "$plugin" \
    --plugin-dir "$c/plugins" --batches "${BATCHES:-1,8,16,32}" --prompt-len 64 --steps 32 --warmup 4 --kv fp8 \
    --profile off --prefill-time "${PREFILL_TIME:-0}" ${KERNEL_OPTIONS:+--kernel-options "$KERNEL_OPTIONS"} --seconds $(( ${PROFILE_EACH:-30} - 10 )) > "$log" 2>&1
  echo "exit $?"
  grep -E "graphs +greedy|graphs +t=0.8|^prefill of" "$log"
  grep -iE "error|illegal|non-finite" "$log" | head -5
done
IFS=';' read -ra nenvs <<< "${NCU_ENVS:-}"
for e in "${nenvs[@]}"; do
  stamp "ncu, one batch-1 decode step, kernels '${NCU_KERNELS:-.}', environment: $e"
  csv="$out/ncu_${e//[^A-Za-z0-9]/_}.csv"
  run_env "$e" timeout "${NCU_LIMIT:-90}" ncu --clock-control none --metrics gpu__time_duration.sum --csv \
    -k "regex:${NCU_KERNELS:-.}" "$c/bin/seatrt-step-profile" "$dir" --provider "$plugin" --plugin-dir "$c/plugins" \
    --batches 1 --prompt-len 8 --steps 1 --warmup 0 --kv fp8 --profile off --seconds 100 > "$csv" 2> "${csv%.csv}.err"
  echo "exit $?"
  # The last 30 layers' worth of each kernel are the decode step's; print
  # count and mean duration (ns) per kernel over the whole run.
  python3 - "$csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows: sys.exit("no rows")
h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value")
d = collections.defaultdict(list)
for r in rows[1:]:
    try: d[r[ki].split("(")[0][:70]].append(float(r[vi].replace(",", "")))
    except ValueError: pass
for k, v in sorted(d.items(), key=lambda kv: -sum(kv[1][-30:])):
    last = v[-30:]
    print(f"{k:72s} n={len(v):5d} last30 mean {sum(last)/len(last)/1000:8.2f} us")
PY
done
stamp done
