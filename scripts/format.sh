#!/usr/bin/env bash
# Lays out the C and C++ files of src/ tests/ fuzz/ bench/ include/ python/native/ by
# .clang-format, with clang-format-15 always (another version formats some lines otherwise):
#   scripts/format.sh [FILE...]           rewrites the files (all of them when none is named)
#   scripts/format.sh --check [FILE...]   changes nothing; lists each file that differs and
#                                         fails (the first step of scripts/test)
# Only files git tracks are formatted: build folders, fetched npm code and generated
# sources (build*/, src/web/npm/node_modules/) never are; third_party/, vendor/ and
# files named *.generated.* are skipped if they ever appear.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-15}
command -v "$clang_format" >/dev/null || { echo "format: $clang_format missing (bash scripts/setup.sh)" >&2; exit 1; }

check=0
if [[ ${1:-} == --check ]]; then check=1; shift; fi
files=("$@")
if ((${#files[@]} == 0)); then
  mapfile -t files < <(git ls-files -- src tests fuzz bench include python/native \
    | grep -E '\.(c|cc|cpp|cxx|h|hh|hpp)$' \
    | grep -vE '(^|/)(third_party|vendor)/|\.generated\.' || true)
fi
((${#files[@]})) || exit 0

if ((check)); then
  # --dry-run -Werror: one warning per differing line, exit 1 when any file differs.
  if ! out=$(printf '%s\0' "${files[@]}" | xargs -0 -n 64 -P 2 "$clang_format" --dry-run -Werror 2>&1); then
    bad=$(grep -oE '^[^:]+\.(c|cc|cpp|cxx|h|hh|hpp):[0-9]+' <<<"$out" | cut -d: -f1 | sort -u)
    head -n 40 <<<"$out" >&2
    echo "format: $(wc -l <<<"$bad") of ${#files[@]} files differ from .clang-format:" >&2
    sed 's/^/  /' <<<"$bad" >&2
    echo "format: run bash scripts/format.sh (or scripts/format.sh FILE...) and commit the result" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  printf '%s\0' "${files[@]}" | xargs -0 -n 64 -P 2 "$clang_format" -i
fi
