#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, TRAINWATCH_FUZZ=ON) in build-fuzz with clang-15 and
# runs each for SECONDS (default 30) from its committed seed corpus and dictionary:
#   scripts/fuzz.sh [SECONDS] [TARGET...]        every target, or the ones named (config_loader, ...)
#   FUZZ_PARALLEL=1 scripts/fuzz.sh 600          all at once, under nice (the long runs of bench/RESULTS.md)
# Fails when any target crashes, leaks, hits undefined behaviour, spends over 10 s on one
# input or grows past 2 GB; the input that did it is in build-fuzz/fuzz-artifacts/<target>/
# (replay: build-fuzz/fuzz/fuzz_<target> FILE). What a run learns goes to
# build-fuzz/fuzz-corpus/<target>/, never into the committed seeds (fuzz/corpus/<target>/):
# merge it there by hand, minimised (-merge=1), when it is worth keeping.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=()
  for f in fuzz/*_fuzzer.cc; do t=${f#fuzz/}; targets+=("${t%_fuzzer.cc}"); done
fi

export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
dir=build-fuzz
mkdir -p "$dir"
CC=clang-15 CXX=clang++-15 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTRAINWATCH_FUZZ=ON -DTRAINWATCH_TESTS=OFF -DTRAINWATCH_BENCH=OFF -DTRAINWATCH_UNITY=ON >"$dir/configure.log" 2>&1 \
  || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j2 --target "${targets[@]/#/fuzz_}"

# UBSan aborts on its first report (cmake/Fuzz.cmake); ASan checks leaks at every input's end.
export UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
run_one() {
  local t=$1 log=$dir/fuzz-logs/$1.log
  mkdir -p "$dir/fuzz-corpus/$t" "$dir/fuzz-artifacts/$t" "$dir/fuzz-logs"
  local dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
  # The first folder takes new inputs; the committed seeds are only read.
  "$dir/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/fuzz-artifacts/$t/" "${dict[@]}" "$dir/fuzz-corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1
}

summary() {
  local t=$1 log=$dir/fuzz-logs/$1.log
  local execs rate last
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  last=$(grep -E '^#[0-9]+' "$log" | tail -n1 | grep -oE 'cov: [0-9]+|corp: [0-9]+/[0-9]+[bKM]*' | tr '\n' ' ' || true)
  printf '%-14s execs %-10s exec/s %-7s %s\n' "$t" "$execs" "$rate" "$last"
}

failed=()
if [[ ${FUZZ_PARALLEL:-0} == 1 ]]; then
  declare -A pids
  for t in "${targets[@]}"; do nice -n 10 bash -c "$(declare -f run_one); dir=$dir seconds=$seconds run_one $t" & pids[$t]=$!; done
  for t in "${targets[@]}"; do wait "${pids[$t]}" || failed+=("$t"); done
else
  for t in "${targets[@]}"; do
    echo "== fuzz $t (${seconds}s)"
    run_one "$t" || failed+=("$t")
  done
fi
for t in "${targets[@]}"; do summary "$t"; done
if ((${#failed[@]})); then
  for t in "${failed[@]}"; do
    echo "fuzz: $t failed; the end of $dir/fuzz-logs/$t.log:" >&2
    tail -n 40 "$dir/fuzz-logs/$t.log" >&2
  done
  exit 1
fi
