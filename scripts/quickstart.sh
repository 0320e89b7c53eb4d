#!/usr/bin/env bash
# README's first command: install what is missing, build, and run `parpat bench --quick` on the
# fastest device present; every result in the table is verified against the CPU reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/parpat info
build/parpat bench --quick
