#!/usr/bin/env bash
# README's second command (and CI's): install what is missing, build with warnings as errors,
# and run every test through CTest. Without a GPU the CUDA cases are skipped by name and the
# OpenCL cases run on PoCL.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA_CMAKE="-DPARPAT_WARNINGS_AS_ERRORS=ON ${EXTRA_CMAKE:-}" scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure
