#!/usr/bin/env bash
# Runs clang-tidy-15 with the checks of .clang-tidy over the sources of src/, two at a time,
# skipping units found clean before with the same input (scripts/tidy_cached.py),
# using build/compile_commands.json (configured here first when missing; build-tidy/'s, a
# folder only configured, when build/ compiles in unity batches). Fails on any finding:
#   scripts/tidy.sh [FILE...]      every file of src/, or the ones named
# Fix a finding, or, where the code is right, silence that one line with
# `// NOLINT(check-name): why` (see .clang-tidy for the checks left out and why).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${TIDY_BUILD:-build}
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
if [[ ! -f $dir/compile_commands.json ]]; then
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINWATCH_WERROR=ON >"$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; exit 1; }
fi
# A build in unity batches (cmake/Unity.cmake; scripts/test builds build/ so) lists its
# batches, not the files: clang-tidy reads the files one by one from a configured, never
# built, folder beside it with the same flags, file by file.
if grep -q '^TRAINWATCH_UNITY:BOOL=ON$' "$dir/CMakeCache.txt" 2>/dev/null; then
  mkdir -p "$dir-tidy"
  cmake -S . -B "$dir-tidy" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINWATCH_WERROR=ON -DTRAINWATCH_UNITY=OFF \
    >"$dir-tidy/configure.log" 2>&1 || { cat "$dir-tidy/configure.log"; exit 1; }
  dir=$dir-tidy
fi

if (($#)); then
  files=()
  for f in "$@"; do files+=("^$(realpath "$f")\$"); done
else
  # Every translation unit under src/ (headers are checked through them: HeaderFilterRegex);
  # not the generated ones of the build folder.
  files=("^$PWD/src/")
fi
# A file compiled into two targets (the reporter: static and shared; the CLI's helpers)
# is checked once: a copy of the database keeping each file's first entry.
mkdir -p "$dir/tidy"
/usr/bin/python3 - "$dir/compile_commands.json" "$dir/tidy/compile_commands.json" <<'PY'
import json, sys
seen, out = set(), []
for entry in json.load(open(sys.argv[1])):
    if entry["file"] not in seen:
        seen.add(entry["file"])
        out.append(entry)
json.dump(out, open(sys.argv[2], "w"), indent=1)
PY
start=$SECONDS
if ! /usr/bin/python3 scripts/tidy_cached.py "$dir/tidy" "$PWD" "${files[@]}"; then
  echo "tidy: findings above ($((SECONDS - start)) s)" >&2
  exit 1
fi
echo "tidy: $((SECONDS - start)) s"
