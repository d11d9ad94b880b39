#!/bin/bash
# Issue 7 "Performance": the end-to-end benchmark of the real server on the
# device machine (one H200), from the repository root, in one command, with
# binaries built on the development machine (-DSEATRT_PORTABLE_HOST=ON) and
# carried in one folder ($1, default build-e2e/carry: bin/ plugins/ devlibs/,
# made by tools/bench/make_serve_carry.sh).  Steps, each under its own limit:
#   1. copy bandwidth of the GPU (tools/bench/copy_bandwidth.py, torch);
#   2. the Hugging Face transformers floor on the same GPU
#      (tools/bench/hf_floor.py, the same shapes in bf16, random weights);
#   3. the full-size synthetic checkpoint into /dev/shm (or /tmp), plus a
#      tokenizer covering all 262,144 ids (tools/bench/make_bench_tokenizer.py:
#      the test tokenizer padded; the checkpoint has none);
#   4. a seat file for it (CUDA provider, fp8 KV, KV pool in bytes,
#      max_num_seqs 32), `seatrt serve`, wait for /ready (canary passed);
#   5. `seatrt bench`: decode at concurrency 1/4/8/16/32 (aggregate and
#      per-stream tok/s, TTFT and ITL p50/p99), then prefill tok/s at each
#      length of PREFILL_LENGTHS (max_tokens 1, one bench call per length);
#      every prompt made of OS-random ids, so the prefix cache never hits;
#   6. the server stopped (SIGTERM), the checkpoint deleted, and a table
#      (tools/bench/serve_report.py) with each batch's byte limit (bytes the
#      step needs / the copy bandwidth measured in step 1).
# Logs and JSON go to $WORK (default /tmp/serve-bench); at the end they are
# packed into $OUT/serve-bench.tgz beside $OUT/report.md (the device tool
# brings back at most 8 files).  Limits (seconds) and sizes come from the
# environment (defaults below); 0 for a *_LIMIT skips the step.  TOTAL_LIMIT
# bounds the whole run: each step gets at most what is left of it (minus a
# reserve for the report), so the run ends inside the device call's limit.
# KERNEL_OPTIONS (default empty) is TOML text put under [kernels.options] in
# the seat, e.g. KERNEL_OPTIONS='prefill_bf16 = true' (the CUDA provider's
# opt-in BF16 prefill, kernels/cuda/README.md).
# CHECKPOINT=DIR serves an existing checkpoint instead (kept; with PROVIDER=cpu
# KV_DTYPE=bf16 and the tiny fixture this checks the script on any machine).
set -u
c=${1:-build-e2e/carry}
out=${WORK:-/tmp/serve-bench}
rm -rf "$out"; mkdir -p "$out"
TOTAL_LIMIT=${TOTAL_LIMIT:-280}
BW_LIMIT=${BW_LIMIT:-30}
GEN_LIMIT=${GEN_LIMIT:-60}
READY_LIMIT=${READY_LIMIT:-120}
SWEEP_LIMIT=${SWEEP_LIMIT:-120}
PREFILL_LIMIT=${PREFILL_LIMIT:-90}         # per prompt length
HF_LIMIT=${HF_LIMIT:-90}
CONCURRENCY=${CONCURRENCY:-1,4,8,16,32}
PROMPT_TOKENS=${PROMPT_TOKENS:-128}
GEN_TOKENS=${GEN_TOKENS:-64}
REQUESTS_PER_STREAM=${REQUESTS_PER_STREAM:-1}
PREFILL_LENGTHS=${PREFILL_LENGTHS-2048,8192,27000,32768}  # empty: no prefill step
PREFILL_REQUESTS=${PREFILL_REQUESTS:-1}
TEMPERATURE=${TEMPERATURE:-0.8}            # 0 = greedy (the host sampler's cheap path)
KV_BYTES=${KV_BYTES:-9114000000}
MAX_MODEL_LEN=${MAX_MODEL_LEN:-262144}
PORT=${PORT:-8765}
PROVIDER=${PROVIDER:-cuda}
KV_DTYPE=${KV_DTYPE:-fp8}
KERNEL_OPTIONS=${KERNEL_OPTIONS:-}
url=http://127.0.0.1:$PORT
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
t_start=$(date +%s)
stamp() { echo "== $1 (t=$(( $(date +%s) - t_start )) s)"; }
http_get() {  # http_get URL: body on stdout, exit 0 only for HTTP 200 (curl may be absent there)
  python3 -c 'import sys, urllib.request
try:
    sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except Exception as e:
    sys.stdout.write(str(e)); sys.exit(1)' "$1"
}
left() { echo $(( t_start + TOTAL_LIMIT - 12 - $(date +%s) )); }  # 12 s kept for stopping + the report
run_limited() {  # run_limited LIMIT LOG cmd...: 0 skips; output to LOG and the console
  local limit=$1 log=$2; shift 2
  if [ "$limit" -le 0 ]; then echo "(skipped)"; return 0; fi
  [ "$(left)" -lt "$limit" ] && limit=$(left)
  if [ "$limit" -le 0 ]; then echo "(skipped: TOTAL_LIMIT reached)"; return 124; fi
  timeout "$limit" "$@" > "$log" 2>&1; local rc=$?
  tail -30 "$log"; echo "exit $rc$([ $rc -eq 124 ] && echo ' (time limit)')"; return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv,noheader | tee "$out/gpu.txt"
{ git log -1 --format='commit %H %cd' 2>/dev/null || echo "commit unknown"; date -u; } | tee "$out/commit.txt"

stamp "1. copy bandwidth"
run_limited "$BW_LIMIT" "$out/bandwidth.log" python3 tools/bench/copy_bandwidth.py --json "$out/bandwidth.json"

stamp "2. Hugging Face transformers floor"
run_limited "$HF_LIMIT" "$out/hf_floor.log" python3 tools/bench/hf_floor.py --budget-s "$(( HF_LIMIT - 25 ))" --json "$out/hf_floor.json"

stamp "3. synthetic checkpoint + tokenizer"
if [ -n "${CHECKPOINT:-}" ]; then  # an existing checkpoint (with its tokenizer), kept: e.g. a CPU check of this script
  dir=$CHECKPOINT
else
  dir=/tmp/synth
  [ "$(df --output=avail -B1G /dev/shm | tail -1)" -ge 20 ] && dir=/dev/shm/synth
  rm -rf "$dir"
  run_limited "$GEN_LIMIT" "$out/synth_gen.log" python3 tools/synth/make_synthetic_checkpoint.py --out "$dir"
  python3 tools/bench/make_bench_tokenizer.py "$dir" | tee "$out/tokenizer.log"
fi

stamp "4. seat + seatrt serve"
seat=$out/synth-seat.toml
kernel_options_table=""
[ -n "$KERNEL_OPTIONS" ] && kernel_options_table=$'[kernels.options]\n'"$KERNEL_OPTIONS"
echo "kernel options: ${KERNEL_OPTIONS:-(none)}" | tee -a "$out/commit.txt"
cat > "$seat" <<EOF
# Written by tools/bench/run_serve_device.sh: the synthetic 26B-A4B checkpoint
# served as the production seat is (fp8 KV, pool in bytes, 32 sequences),
# without parsers or API key (the benchmark needs neither).
[seat]
name = "synth-bench"
[server]
host = "127.0.0.1"
port = $PORT
[model]
path = "$dir"
max_model_len = $MAX_MODEL_LEN
[kernels]
provider = "$PROVIDER"
device = 0
$kernel_options_table
[cache]
kv_cache_memory = $KV_BYTES
kv_cache_dtype = "$KV_DTYPE"
prefix_caching = true
[scheduler]
max_num_seqs = 32
[plugins]
search_paths = ["$PWD/$c/plugins"]
[logging]
format = "text"
level = "info"
EOF
"$c/bin/seatrt" serve "$seat" > "$out/serve.log" 2>&1 &
serve_pid=$!
ready=0
lim=$READY_LIMIT; [ "$(left)" -lt "$lim" ] && lim=$(left)
for ((i = 0; i < lim; ++i)); do
  if http_get "$url/ready" > /dev/null 2>&1; then ready=1; break; fi
  kill -0 "$serve_pid" 2> /dev/null || break
  sleep 1
done
tail -15 "$out/serve.log"
echo "ready: $ready after $i s"
http_get "$url/ready"; echo

if [ "$ready" = 1 ]; then
  http_get "$url/v1/seat" > "$out/seat.json" 2>&1  # the memory plan, with the provider's reserved workspace
  stamp "5a. decode sweep, concurrency $CONCURRENCY"
  run_limited "$SWEEP_LIMIT" "$out/bench_decode.log" "$c/bin/seatrt" bench "$url" --concurrency "$CONCURRENCY" \
    --id-prompts --prompt-tokens "$PROMPT_TOKENS" --gen-tokens "$GEN_TOKENS" \
    --requests-per-stream "$REQUESTS_PER_STREAM" --temperature "$TEMPERATURE" --json "$out/bench_decode.json"
  for len in ${PREFILL_LENGTHS//,/ }; do
    stamp "5b. prefill, $len-token prompt"
    run_limited "$PREFILL_LIMIT" "$out/bench_prefill_$len.log" "$c/bin/seatrt" bench "$url" --concurrency none \
      --prefill "$len" --prefill-requests "$PREFILL_REQUESTS" --temperature "$TEMPERATURE" --json "$out/bench_prefill_$len.json"
  done
  http_get "$url/metrics" > "$out/metrics.txt" 2>&1
fi
stamp "6. stop the server"
kill -TERM "$serve_pid" 2> /dev/null
for ((i = 0; i < 8; ++i)); do kill -0 "$serve_pid" 2> /dev/null || break; sleep 1; done
kill -KILL "$serve_pid" 2> /dev/null
wait "$serve_pid" 2> /dev/null; echo "serve exit: $?"
grep -i -E "error|warn|kv pool|memory plan|provider workspace|loaded" "$out/serve.log" | grep -v " info \[cpu\]" | tail -12

[ -z "${CHECKPOINT:-}" ] && rm -rf "$dir"
python3 tools/bench/serve_report.py "$out" > "$out/report.md" 2>&1
if [ -n "${OUT:-}" ]; then
  tar czf "$OUT/serve-bench.tgz" -C "$out" . && cp "$out/report.md" "$OUT/report.md"
fi
stamp "done"
cat "$out/report.md"
