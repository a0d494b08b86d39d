#!/usr/bin/env bash
# Builds TARGETs (default: what the Debian package ships) in build-release/: -O2 with line
# tables for debug info (-g1), warnings as errors, no tests or benchmarks, in unity batches
# (cmake/Unity.cmake), on every core:
#   scripts/build_release.sh [TARGET...]
# The flags are cmake/release.flags: scripts/demo (through this script) and `pip install
# ./python` (python/setup.py) compile with exactly those, so whichever comes first fills
# ccache for the other. The Debian package adds full debug info (debian/rules).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
dir=build-release
targets=("$@")
((${#targets[@]})) || targets=(trainwatch trainwatch-agent trainwatch_shared)
mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja $(cat cmake/release.flags) "-DTRAINWATCH_PYTHON=${TRAINWATCH_PYTHON:-/usr/bin/python3}" \
  >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}"
