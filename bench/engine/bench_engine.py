#!/usr/bin/python3
"""Benchmarks of the server's engine, each beside its peer in the same run.

1. HTTP checks per CPU-second: trainwatch checking a local nginx, then Prometheus'
   blackbox_exporter probing the same kind of target through /probe (the peer script
   ../shared/peers/bench_blackbox_probe.py, run as is).
2. 10,000 HTTP monitors at a 10 s interval against local nginx: worst start delay of a
   check (trainwatch_check_max_start_delay_seconds) and peak RSS.
3. GET /api/v1/monitors with those 10,000 monitors under wrk: p99.

With --store postgres, only benchmark 1, twice in one run: trainwatch on SQLite, then on
a throwaway PostgreSQL 15 (started here as tests/integration/conftest.py does, with its
defaults); the PostgreSQL server's own CPU is counted beside trainwatch's.

With --rounds N, only benchmark 1, N rounds in one run; each round measures trainwatch
on SQLite, on PostgreSQL too with --store postgres (trainwatch's CPU; the database's is
reported beside it), the binary given by --before on SQLite, then blackbox_exporter, so
that a change and the peer are measured side by side under the same conditions. It
prints each round, then the median and spread of each and of each ratio to the peer.

Usage: /usr/bin/python3 bench/engine/bench_engine.py [--quick] [--store postgres]
       /usr/bin/python3 bench/engine/bench_engine.py --rounds 3 [--store postgres]
           [--before OLD_BINARY] [--quick]
Prints one JSON line last. Everything binds 127.0.0.1 and stops by itself.
"""
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
PEERS = pathlib.Path(os.environ.get("TRAINWATCH_PEERS", ROOT.parent / "shared" / "peers"))
sys.path.insert(0, str(PEERS))
from wrkparse import parse_wrk  # noqa: E402  (the peers' own wrk parser, imported, not copied)
sys.path.insert(0, str(ROOT / "bench"))
from benchkit import cpu_s, free_port, postgres_cpu_s  # noqa: E402

BINARY = os.environ.get("TRAINWATCH_BIN", str(ROOT / "build" / "src" / "cli" / "trainwatch"))
QUICK = "--quick" in sys.argv


def option(name):
    """The value after `name` on the command line, or None."""
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv[:-1] else None


ON_POSTGRES = option("--store") == "postgres"
ROUNDS = int(option("--rounds") or 0)
BEFORE = option("--before")


def peak_rss_mb(pid):
    return int(re.search(r"^VmHWM:\s+(\d+) kB", open(f"/proc/{pid}/status").read(), re.M).group(1)) / 1024


def get(url):
    return urllib.request.urlopen(url, timeout=30).read().decode()


def metric_sum(text, name):
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def start_nginx(tmp):
    port = free_port()
    os.makedirs(f"{tmp}/logs", exist_ok=True)
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(f"""daemon off; master_process off; pid {tmp}/nginx.pid; error_log stderr warn;
worker_rlimit_nofile 65536;
events {{ worker_connections 16384; }}
http {{ access_log off; client_body_temp_path {tmp}/cb; proxy_temp_path {tmp}/pt;
  fastcgi_temp_path {tmp}/ft; uwsgi_temp_path {tmp}/ut; scgi_temp_path {tmp}/st;
  server {{ listen 127.0.0.1:{port} backlog=4096; location / {{ return 200 "ok\\n"; }} }} }}
""")
    proc = subprocess.Popen(["nginx", "-p", tmp, "-c", f"{tmp}/nginx.conf", "-e", "stderr"])
    for _ in range(100):
        try:
            get(f"http://127.0.0.1:{port}/")
            return proc, port
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("nginx did not start")


def start_trainwatch(tmp, monitors, interval, max_in_flight=256, store_url=None, binary=BINARY):
    lines = [f"server:\n  max_checks_in_flight: {max_in_flight}"]
    if store_url:
        lines.append(f"store:\n  url: {store_url}")
    lines.append("monitors:")
    for name, url in monitors:
        lines.append(f"  - name: {name}\n    type: http\n    url: {url}\n    interval: {interval}\n    timeout: 5s")
    config = f"{tmp}/trainwatch.yaml"
    pathlib.Path(config).write_text("\n".join(lines) + "\n")
    data = tempfile.mkdtemp(dir=tmp)
    proc = subprocess.Popen([binary, "serve", "-c", config, "--listen", "127.0.0.1:0", "--data-dir", data],
                            stdout=subprocess.PIPE, stderr=open(f"{tmp}/trainwatch.log", "ab"))
    line = proc.stdout.readline().decode()
    base = line.strip().split(" on ")[1].rstrip("/")
    return proc, base


def stop(proc):
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def checks_per_cpu_second(tmp, nginx_port, store_url=None, db_pid=None, binary=BINARY):
    """trainwatch's side of benchmark 1: 500 monitors at 250 ms (2,000 checks/s offered)."""
    duration = 10 if QUICK else 20
    target = f"http://127.0.0.1:{nginx_port}/"
    tw, base = start_trainwatch(tmp, [(f"m{i}", target) for i in range(500)], "250ms", store_url=store_url,
                                binary=binary)
    db = (lambda: postgres_cpu_s(db_pid)) if db_pid else (lambda: 0.0)
    try:
        time.sleep(12)  # past the spread of first checks (10 s window)
        c0, d0, n0 = cpu_s(tw.pid), db(), metric_sum(get(base + "/metrics"), "trainwatch_checks_total")
        time.sleep(duration)
        c1, d1, text = cpu_s(tw.pid), db(), get(base + "/metrics")
        n1 = metric_sum(text, "trainwatch_checks_total")
        failures = sum(float(x) for x in re.findall(r'result="failure"} (\S+)', text))
        dropped = metric_sum(text, "trainwatch_store_dropped_writes_total")
    finally:
        stop(tw)
    checks = n1 - n0
    out = {"checks": int(checks), "checks_per_s": round(checks / duration), "cpu_s": round(c1 - c0, 2),
           "cpu_s_per_1000_checks": round((c1 - c0) / checks * 1000, 4),
           "checks_per_cpu_s": round(checks / (c1 - c0)), "failed_checks": int(failures),
           "store_dropped_writes": int(dropped)}
    if db_pid:
        out["database_cpu_s"] = round(d1 - d0, 2)
        out["checks_per_cpu_s_with_database"] = round(checks / (c1 - c0 + d1 - d0))
    return out


def sqlite_and_postgres():
    """Benchmark 1 on each store, one after the other in one run."""
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from conftest import Postgres  # noqa: E402  (the tests' throwaway cluster)
    tmp = tempfile.mkdtemp(prefix="tw_bench_engine_")
    nginx, port = start_nginx(tmp)
    pg = Postgres()
    try:
        sqlite = checks_per_cpu_second(tmp, port)
        print("sqlite:", sqlite, flush=True)
        postmaster = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
        postgres = checks_per_cpu_second(tmp, port, store_url=pg.url(), db_pid=postmaster)
        # What a raw result costs on disk, with its indexes (docs/scaling.md sizes from it).
        rows = int(pg.psql("SELECT count(*) FROM check_results"))
        postgres["bytes_per_result"] = round(int(pg.psql("SELECT pg_total_relation_size('check_results')")) / rows, 1)
        print("postgres:", postgres, flush=True)
    finally:
        stop(nginx)
        pg.discard()
        subprocess.run(["rm", "-rf", tmp])
    print(json.dumps({"bench": "engine_stores", "nproc": os.cpu_count(), "quick": QUICK, "sqlite": sqlite,
                      "postgres": postgres,
                      "ratio_postgres_to_sqlite": round(postgres["checks_per_cpu_s"] / sqlite["checks_per_cpu_s"], 2)}))


def blackbox_peer():
    duration = "5" if QUICK else "10"
    out = subprocess.run(["/usr/bin/python3", str(PEERS / "bench_blackbox_probe.py"), duration],
                         capture_output=True, text=True, timeout=300, cwd=str(PEERS))
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    best = min(summary["results"], key=lambda r: r["bb_cpu_s_per_1000_probes"])
    return {"probes_per_s": best["rps"], "cpu_s_per_1000_probes": best["bb_cpu_s_per_1000_probes"],
            "probes_per_cpu_s": round(1000 / best["bb_cpu_s_per_1000_probes"]),
            "config": f"t{best['threads']}/c{best['connections']}", "all": summary["results"]}


def ten_thousand_monitors(tmp, nginx_port):
    duration = 30 if QUICK else 120
    # Ten distinct paths so the monitors are not one URL ten thousand times.
    monitors = [(f"m{i}", f"http://127.0.0.1:{nginx_port}/t{i % 10}") for i in range(10_000)]
    tw, base = start_trainwatch(tmp, monitors, "10s")
    try:
        time.sleep(duration)
        text = get(base + "/metrics")
        result = {"duration_s": duration,
                  "checks": int(metric_sum(text, "trainwatch_checks_total")),
                  "failed_checks": int(sum(float(x) for x in re.findall(r'result="failure"} (\S+)', text))),
                  "max_start_delay_s": metric_sum(text, "trainwatch_check_max_start_delay_seconds"),
                  "peak_rss_mb": round(peak_rss_mb(tw.pid), 1),
                  "store_dropped_writes": int(metric_sum(text, "trainwatch_store_dropped_writes_total"))}
        wrk = subprocess.run(["wrk", "-t2", "-c10", "-d10s", "--latency", "--timeout", "5s",
                              base + "/api/v1/monitors"], capture_output=True, text=True, timeout=60).stdout
        parsed = parse_wrk(wrk)
        result["list_monitors"] = {"rps": parsed["rps"], "p50_ms": parsed["p50_ms"], "p99_ms": parsed["p99_ms"],
                                   "errors": parsed["errors_total"],
                                   "bytes": len(get(base + "/api/v1/monitors"))}
        result["max_start_delay_s_after_wrk"] = metric_sum(get(base + "/metrics"),
                                                           "trainwatch_check_max_start_delay_seconds")
        return result
    finally:
        stop(tw)


def median_and_spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def rounds_beside_the_peer():
    """Benchmark 1, ROUNDS times: trainwatch (on SQLite, then on PostgreSQL with --store
    postgres), the --before binary on SQLite, then blackbox_exporter."""
    tmp = tempfile.mkdtemp(prefix="tw_bench_engine_")
    pg = None
    if ON_POSTGRES:
        sys.path.insert(0, str(ROOT / "tests" / "integration"))
        from conftest import Postgres  # noqa: E402  (the tests' throwaway cluster)
        pg = Postgres()
    runs = {"trainwatch": [], "trainwatch_postgres": [], "before": [], "blackbox_exporter": []}
    try:
        for round_number in range(ROUNDS):
            nginx, port = start_nginx(tmp)
            try:
                runs["trainwatch"].append(checks_per_cpu_second(tmp, port))
                if pg:
                    postmaster = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
                    runs["trainwatch_postgres"].append(
                        checks_per_cpu_second(tmp, port, store_url=pg.url(), db_pid=postmaster))
                if BEFORE:
                    runs["before"].append(checks_per_cpu_second(tmp, port, binary=BEFORE))
            finally:
                stop(nginx)
            runs["blackbox_exporter"].append(blackbox_peer())
            for name, measured in runs.items():
                if measured:
                    print(f"round {round_number + 1} {name}:",
                          {k: v for k, v in measured[-1].items() if k != "all"}, flush=True)
    finally:
        subprocess.run(["rm", "-rf", tmp])
        if pg:
            pg.discard()
    peer = [p["probes_per_cpu_s"] for p in runs.pop("blackbox_exporter")]
    summary = {"bench": "engine_rounds", "nproc": os.cpu_count(), "quick": QUICK, "rounds": ROUNDS,
               "blackbox_exporter": median_and_spread(peer)}
    for name, measured in runs.items():
        if measured:
            ours = [r["checks_per_cpu_s"] for r in measured]
            summary[name] = median_and_spread(ours)
            summary[f"{name}_ratio"] = median_and_spread([round(o / b, 2) for o, b in zip(ours, peer)])
    print(json.dumps(summary))


def main():
    tmp = tempfile.mkdtemp(prefix="tw_bench_engine_")
    nginx, port = start_nginx(tmp)
    try:
        ours = checks_per_cpu_second(tmp, port)
        print("trainwatch:", ours, flush=True)
    finally:
        stop(nginx)
    peer = blackbox_peer()
    print("blackbox_exporter:", {k: v for k, v in peer.items() if k != "all"}, flush=True)
    nginx, port = start_nginx(tmp)
    try:
        scale = ten_thousand_monitors(tmp, port)
        print("10k monitors:", scale, flush=True)
    finally:
        stop(nginx)
    summary = {"bench": "engine", "nproc": os.cpu_count(), "quick": QUICK,
               "checks_per_cpu_s": {"trainwatch": ours, "blackbox_exporter": peer,
                                    "ratio": round(ours["checks_per_cpu_s"] / peer["probes_per_cpu_s"], 1)},
               "ten_thousand_monitors": scale}
    subprocess.run(["rm", "-rf", tmp])
    print(json.dumps(summary))


if __name__ == "__main__":
    if ROUNDS:
        rounds_beside_the_peer()
    elif ON_POSTGRES:
        sqlite_and_postgres()
    else:
        main()
