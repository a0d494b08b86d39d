#!/usr/bin/env bash
# ThreadSanitizer: builds build-tsan (-DTRAINWATCH_SANITIZE=thread, no benchmarks), runs
# every unit test in it, then scripts/tsan_smoke.py: `trainwatch serve` on the demo config
# answering requests from several threads, a ping, a SIGHUP reload and SIGTERM.
#   scripts/tsan.sh [CTEST ARGS...]     e.g. scripts/tsan.sh -R Engine
# Fails on the first data race, lock-order inversion or other TSan report (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh build-tsan -DTRAINWATCH_SANITIZE=thread -DTRAINWATCH_BENCH=OFF -DTRAINWATCH_UNITY=ON
# exitcode=66: a report ends the process with a code no test or server uses itself.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}"
echo "== unit tests under TSan"
ctest --test-dir build-tsan --output-on-failure -j2 "$@"
echo "== trainwatch serve under TSan"
/usr/bin/python3 scripts/tsan_smoke.py build-tsan/src/cli/trainwatch
