#!/bin/bash
# Old main against new main on one device, in one call: the same synthetic
# full-size checkpoint served by each build in turn (decode at CONCURRENCY,
# prefill at PREFILL_LENGTHS), so both figures come from the same GPU in the
# same run.  From the repository root:
#   tools/bench/run_compare_device.sh OLD_CARRY NEW_CARRY
# OLD_CARRY may be a folder or a .tar.xz of one (a carry made by
# tools/bench/make_serve_carry.sh).  Reports go to $OUT/old/ and $OUT/new/.
set -u
old=$1 new=$2
final=${OUT:-/tmp/compare}
mkdir -p "$final/old" "$final/new"
if [[ "$old" == *.tar.xz ]]; then
  mkdir -p /tmp/old-carry && tar xJf "$old" -C /tmp/old-carry
  old=/tmp/old-carry/carry
fi
export CONCURRENCY=${CONCURRENCY:-1,16,32} PREFILL_LENGTHS=${PREFILL_LENGTHS-8192} HF_LIMIT=0
dir=/dev/shm/synth
[ "$(df --output=avail -B1G /dev/shm | tail -1)" -ge 20 ] || dir=/tmp/synth
rm -rf "$dir"
echo "== synthetic checkpoint into $dir"
timeout "${GEN_LIMIT:-90}" python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" > "$final/synth_gen.log" 2>&1
echo "exit $?"; python3 tools/bench/make_bench_tokenizer.py "$dir" | tail -1
for side in old new; do
  c=$([ "$side" = old ] && echo "$old" || echo "$new")
  # run_serve_device.sh takes the carry relative to the working directory.
  rel=$(realpath --relative-to="$PWD" "$c")
  echo "== $side main ($c)"
  CHECKPOINT=$dir WORK=/tmp/serve-$side OUT="$final/$side" TOTAL_LIMIT=${SIDE_LIMIT:-240} \
    bash tools/bench/run_serve_device.sh "$rel" > "$final/$side/console.log" 2>&1
  tail -25 "$final/$side/console.log"
done
rm -rf "$dir"
