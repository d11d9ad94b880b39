#!/usr/bin/env bash
# Runs the whole suite, the normal tree and the sanitizer tree, several times
# in a row while a CPU hog keeps every core busy, and lists each test that
# failed with the seed that made it fail (for tests that draw one).  A test
# that passes alone but fails here waits on a race or a time instead of an
# event: a defect.
#   tools/ci/stress-tests.sh [RUNS]          (default 3)
# Uses build/ and build-asan/ as tools/ci/test-all.sh makes them (built here
# first if missing).  Logs and JUnit reports go to $STRESS_DIR (default
# build-stress-logs/, ignored by git).  Exit status: 0 only if every run passed.
# To rerun a failure with its seed: SEATRT_TEST_SEED=N ctest --test-dir TREE -R 'NAME'
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-3}"
JOBS="${SEATRT_JOBS:-$(nproc)}"
STRESS_DIR="${STRESS_DIR:-build-stress-logs}"
mkdir -p "$STRESS_DIR"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

[[ -f build/CTestTestfile.cmake ]] || tools/ci/setup.sh build || exit 1
[[ -f build-asan/CTestTestfile.cmake ]] ||
  tools/ci/setup.sh build-asan -DSEATRT_SANITIZE=address,undefined -DSEATRT_CUDA=OFF || exit 1

# The hog: one busy process per core, at the tests' own priority, for the
# whole run.
hogs=()
for ((i = 0; i < $(nproc); ++i)); do
  bash -c 'while :; do :; done' &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
echo "stress: $(nproc) CPU hogs running (pids ${hogs[*]}); $RUNS runs of each tree, ctest -j $JOBS"

start=$(date +%s)
reports=()
for tree in build build-asan; do
  for ((run = 1; run <= RUNS; ++run)); do
    name="${tree}-run${run}"
    t0=$(date +%s)
    ctest --test-dir "$tree" -j "$JOBS" --output-on-failure --output-junit "$PWD/$STRESS_DIR/$name.xml" \
      > "$STRESS_DIR/$name.log" 2>&1
    rc=$?
    echo "stress: $name: exit $rc after $(( $(date +%s) - t0 ))s ($(grep -E 'tests passed|tests failed' "$STRESS_DIR/$name.log" | tail -1))"
    reports+=("$STRESS_DIR/$name.xml")
  done
done
echo "stress: all runs took $(( $(date +%s) - start ))s"

# Each failed test, with the seed its output printed ("seed N" / "random seed: N").
python3 - "${reports[@]}" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
failures = 0
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"stress: {path}: no report ({e})")
        failures += 1
        continue
    for case in root.iter("testcase"):
        if case.find("failure") is None and case.find("error") is None:
            continue
        failures += 1
        out = "".join(e.text or "" for e in case.iter() if e.tag in ("system-out", "failure", "error"))
        seeds = sorted(set(re.findall(r"seed:? (\d+)", out)))
        print(f"FAILED  {path.rsplit('/', 1)[-1][:-4]}  {case.get('name')}  seed: {', '.join(seeds) or 'none drawn'}")
print(f"stress: {failures} failure(s) in {len(sys.argv) - 1} runs")
sys.exit(1 if failures else 0)
EOF
