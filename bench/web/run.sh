#!/usr/bin/env bash
# The pages' benchmark: 1,000 monitors with 90 days of generated history.
#   1. p99 of GET /status/{slug}, /api/v1/status/{slug}, /api/v1/monitors, /api/v1/incidents
#      and the dashboard's monitor list (/) under wrk (2 threads, 16 connections, 10 s);
#   2. the status page's size;
#   3. the SQLite file's size for 90 days of 1,000 monitors checked every minute: with
#      retention (14 days raw + rollups) beside raw-only (90 days of raw results), from
#      one generated day of raw results and the measured bytes per row.
# Usage: bench/web/run.sh [BUILD_DIR]   (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/src/cli/trainwatch
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

{
  echo "monitors:"
  for i in $(seq 0 999); do
    printf '  - {name: m%04d, type: tcp, host: 127.0.0.1, port: 1, interval: 1h, timeout: 1s}\n' "$i"
  done
  echo "status_pages:"
  echo "  - slug: bench"
  echo "    title: Benchmark"
  echo "    groups:"
  echo "      - name: Training"
  echo "        monitors: [$(seq -f 'm%04g' 0 9 | paste -sd, -)]"
  echo "      - name: Inference"
  echo "        monitors: [$(seq -f 'm%04g' 10 19 | paste -sd, -)]"
} >"$work/bench.yaml"

start_server() {
  "$bin" serve -c "$work/bench.yaml" --listen 127.0.0.1:0 --data-dir "$work/data" >"$work/out" 2>"$work/log" &
  server=$!
  for _ in $(seq 1 200); do grep -q serving "$work/out" 2>/dev/null && break; sleep 0.1; done
  base=$(sed -n 's/.* on \(http[^ ]*\)\//\1/p' "$work/out")
}

start_server; kill "$server"; wait "$server" || true   # migrates the schema
/usr/bin/python3 bench/web/generate_history.py --db "$work/data/trainwatch.db" --raw-days 1
start_server

echo "| endpoint | p50 ms | p99 ms | req/s |"
echo "| --- | --- | --- | --- |"
for path in /status/bench /api/v1/status/bench /api/v1/monitors "/api/v1/incidents?limit=50" "/?state=down" /; do
  out=$(wrk -t2 -c16 -d10s --latency "$base$path" 2>&1)
  p50=$(awk '/^ +50%/{print $2}' <<<"$out"); p99=$(awk '/^ +99%/{print $2}' <<<"$out")
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  echo "| \`GET $path\` | $p50 | $p99 | $rps |"
done
page=$(curl -s "$base/status/bench" | wc -c)
echo
echo "status page: $page bytes"
kill "$server"; wait "$server" || true

# Sizes: one day of raw results measured, the rest computed from it.
db=$work/data/trainwatch.db
/usr/bin/python3 - "$db" <<'PY'
import os, sqlite3, sys
db = sys.argv[1]
c = sqlite3.connect(db)
c.execute("VACUUM")
total = os.path.getsize(db)
raw_rows = c.execute("SELECT COUNT(*) FROM check_results").fetchone()[0]
def table_bytes(names):
    return sum(r[0] for r in c.execute(
        "SELECT SUM(pgsize) FROM dbstat WHERE name IN (%s)" % ",".join("?" * len(names)), names)) or 0
raw = table_bytes(["check_results", "check_results_monitor_at", "check_results_at"])
per_row = raw / raw_rows
rest = total - raw
rows_90 = 1000 * 1440 * 90
rows_14 = 1000 * 1440 * 14
mb = lambda b: f"{b / 1e6:,.0f} MB"
print(f"raw bytes per result (row + 2 indexes): {per_row:.1f}")
print(f"rollups + incidents + state (90 d daily, 14 d hourly): {mb(rest)}")
print(f"with retention (14 d raw + rollups): {mb(rows_14 * per_row + rest)}")
print(f"raw only (90 d raw, no rollups): {mb(rows_90 * per_row)}")
PY
