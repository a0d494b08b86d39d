#!/usr/bin/env bash
# Packs what the real-GPU check (device_check.py) needs on a machine that has an NVIDIA
# driver but not this build: the agent program built here with every shared library it
# links (glibc and its loader included, so a machine with another distribution runs it
# unchanged), libtrainwatch for the check's rank, and the check itself.
#   bash bench/gpu/pack.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, build-gpu-check)
# OUT_DIR is under /build*/ (git-ignored) so a device run can carry it whole.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-build-gpu-check}
agent="$build/src/cli/trainwatch-agent"
[ -x "$agent" ] || { echo "pack: $agent is missing; build it: bash scripts/build.sh $build" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$agent" "$out/bin/"
# Every library ldd resolves, the loader (the one absolute path ldd prints) included.
ldd "$agent" | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}' | sort -u | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
# The rank the check registers as goes through the C library (ctypes), whatever the
# machine's Python version.
cp -L "$build/src/reporter/libtrainwatch.so.1" "$out/lib/"
cp bench/gpu/device_check.py "$out/"
# Debug info is most of the size; a device run carries at most 64 MiB.
strip --strip-debug "$out/bin/"* "$out/lib/"* 2>/dev/null || true
git rev-parse --short HEAD > "$out/commit" 2>/dev/null || echo unknown > "$out/commit"
du -sh "$out" | awk '{print "pack: " $1 " in '"$out"'"}'
