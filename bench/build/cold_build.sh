#!/usr/bin/env bash
# Builds what scripts/demo builds (the server, the node agent, the Python module) from an
# empty build folder with ccache off, as on a fresh machine:
#   bench/build/cold_build.sh release|unity|files [BUILD_DIR]
#   release  cmake/release.flags as they are: unity batches, line tables only (-g1), as the demo
#   unity    unity batches with full debug info (-g), as the Debian package
#   files    file by file with full debug info, as the demo built before unity batches
# Prints "cold_build <mode> <seconds> <compile steps>". Time it whole from outside for
# medians; bench/RESULTS.md has the figures. KEEP_BUILD=1 keeps the build folder (its
# .ninja_log has each step's time).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:?release, unity or files}
dir=${2:-/tmp/trainwatch-cold-build-$mode}
case $mode in
  release) extra=() ;;
  unity) extra=(-DTRAINWATCH_LINE_TABLES=OFF) ;;
  files) extra=(-DTRAINWATCH_LINE_TABLES=OFF -DTRAINWATCH_UNITY=OFF) ;;
  *) echo "mode is release, unity or files, not $mode" >&2; exit 2 ;;
esac
rm -rf "$dir"
export CCACHE_DISABLE=1
start=$SECONDS
cmake -S . -B "$dir" -G Ninja $(cat cmake/release.flags) "${extra[@]}" \
  -DTRAINWATCH_PYTHON=/usr/bin/python3 >"$dir.configure.log" 2>&1
cmake --build "$dir" -j"$(nproc)" --target trainwatch trainwatch-agent trainwatch_python >"$dir.build.log"
steps=$(grep -c 'Building CXX' "$dir.build.log" || true)
echo "cold_build $mode $((SECONDS - start)) $steps"
[[ -n ${KEEP_BUILD:-} ]] || rm -rf "$dir"
