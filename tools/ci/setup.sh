#!/usr/bin/env bash
# Installs the missing Debian 12 packages (tools/ci/packages.txt), then
# configures and builds one tree.
#   tools/ci/setup.sh [BUILD_DIR] [extra CMake arguments...]
# BUILD_DIR defaults to build/.  SEATRT_JOBS sets the build parallelism
# (default: all cores).  The CUDA provider is compiled when nvcc is found
# (on PATH or in /usr/local/cuda/bin).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR="${1:-build}"
shift || true
JOBS="${SEATRT_JOBS:-$(nproc)}"

# --- packages -------------------------------------------------------------
missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done < tools/ci/packages.txt
if ((${#missing[@]})); then
  echo "setup: installing missing packages: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "setup: not root and no sudo: install these packages first: ${missing[*]}" >&2
    exit 1
  fi
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- Python test oracles ------------------------------------------------------
# A virtual environment in .venv/ holds the Python packages the tests drive
# seatrt with (the openai client, tokenizers, jsonschema); CMake's tests use
# its interpreter.
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r tools/ci/requirements-test.txt

# --- configure and build ----------------------------------------------------
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DPython3_EXECUTABLE="$PWD/.venv/bin/python" "$@"
cmake --build "$BUILD_DIR" -j "$JOBS"
