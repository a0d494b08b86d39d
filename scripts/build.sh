#!/usr/bin/env bash
# Configures and builds one build folder: scripts/build.sh [DIR] [extra cmake args...]
# Reuses the folder between runs (and ccache across folders), so a rebuild costs seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINWATCH_WERROR=ON "$@" >"$dir/configure.log" 2>&1 \
  || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j2
