#!/usr/bin/env bash
# Sets up (missing packages, configure, build into build/) and serves the
# tiny CPU demo seat at http://127.0.0.1:8000/v1 (configs/demo.toml).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/ci/setup.sh build
exec build/bin/seatrt serve configs/demo.toml "$@"
