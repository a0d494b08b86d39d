"""Job monitor benchmark: does the job monitor stay quiet on a healthy run, and how fast does it
name the culprit when a rank breaks? Beside each figure, the seeds' rule (rank 0's /health
polled every 60 s, "no step for 10 minutes") for the same case.

    TRAINWATCH_BIN=build/src/cli/trainwatch TRAINWATCH_BUILD=build \
        /usr/bin/python3 bench/jobs/bench_jobs.py [healthy_seconds]

Runs the tests' 4-rank gloo job over 2 nodes (two sidecar agents) with default thresholds
(report_every 5 s, step_timeout_min 60 s): first `healthy_seconds` (default 600) of
training with jittery step times (20 ms pace + up to 30 ms random) and one checkpoint that
lasts 20 steps' time; then, on the same job, a straggler (rank 3 at 3x compute), a NaN
loss on rank 0, SIGSTOP of rank 1 (then SIGCONT) and SIGKILL of rank 2, each timed from
the fault to the first change of the job's API state. Prints a markdown table.
"""
import os
import pathlib
import signal
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "integration"))
import test_jobs  # noqa: E402  (the tests' cluster, on purpose: one job definition)
from conftest import Server, wait_for  # noqa: E402

SEED_RULE_S = 600 + 60  # 10 minutes without a step, seen at the next 60 s poll

CONFIG = """
jobs:
  token: ${TRAINWATCH_TOKEN}
monitors:
  - name: tiny
    type: job
    world_size: 4
"""


def main():
    healthy_s = float(sys.argv[1]) if len(sys.argv) > 1 else 600
    test_jobs.REPORT_EVERY = 5.0
    os.environ["TRAINWATCH_TOKEN"] = test_jobs.TOKEN
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    (tmp / "trainwatch.yaml").write_text(CONFIG)
    server = Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start()
    cluster = test_jobs.Cluster(tmp, server, env_extra={"STEP_JITTER": "0.03", "CHECKPOINT_STEPS": "20"})
    rows = []
    try:
        wait_for(lambda: test_jobs.training_up(cluster), timeout=120, interval=0.5, what="job up")
        # Healthy run: poll the API every second, remember anything that is not a clean UP.
        start = time.monotonic()
        checkpoint_at = start + healthy_s / 2
        checkpointed = False
        noise = []
        while time.monotonic() - start < healthy_s:
            if not checkpointed and time.monotonic() >= checkpoint_at:
                cluster.touch("checkpoint")
                checkpointed = True
            j = cluster.job()
            if j.get("status") != "up" or j.get("findings"):
                noise.append((round(time.monotonic() - start), j.get("status"), [f["message"] for f in j.get("findings", [])]))
            time.sleep(1)
        status, incidents, _ = server.get("/api/v1/incidents?monitor=tiny")
        j = cluster.job()
        rows.append(("healthy run, jitter, one 20-step checkpoint", f"{healthy_s:.0f} s",
                     f"{len(incidents['incidents'])} incidents, {len(noise)} polls not clean UP", "no alert", "no alert"))
        print("healthy:", len(incidents["incidents"]), "incidents; not clean:", noise[:5], "; timeouts", j["timeouts"],
              flush=True)

        def timed(what, fault, predicate, undo=None, timeout=180):
            fault()
            t0 = time.monotonic()
            j = wait_for(lambda: (j := cluster.job()) and predicate(j) and j, timeout=timeout, interval=0.2, what=what)
            elapsed = time.monotonic() - t0
            text = (j.get("incident") or {}).get("cause") or j.get("cause")
            if undo:
                undo()
                wait_for(lambda: test_jobs.training_up(cluster), timeout=120, interval=0.5, what="recovery")
            return elapsed, text

        el, text = timed("straggler", lambda: cluster.touch("slow-3"),
                         lambda j: test_jobs.findings(j, "straggler"), lambda: cluster.remove("slow-3"))
        rows.append(("rank 3 at 3x compute (warning)", f"{el:.1f} s", text, "never (steps continue)", ""))
        el, text = timed("NaN", lambda: cluster.touch("nan-0"), lambda j: j["status"] == "down",
                         lambda: cluster.remove("nan-0"))
        rows.append(("NaN loss on rank 0", f"{el:.1f} s", text, "never (steps continue)", ""))
        victim = cluster.procs[1]
        el, text = timed("SIGSTOP", lambda: victim.send_signal(signal.SIGSTOP), lambda j: j["status"] == "down",
                         lambda: victim.send_signal(signal.SIGCONT))
        rows.append(("SIGSTOP rank 1", f"{el:.1f} s", text, f"{SEED_RULE_S} s", "no rank named"))
        el, text = timed("SIGKILL", lambda: cluster.procs[2].kill(), lambda j: j["status"] == "down")
        rows.append(("SIGKILL rank 2", f"{el:.1f} s", text, f"{SEED_RULE_S} s (if rank 0 hangs; with gloo it exits and /health stops answering)",
                     "no rank named"))
    finally:
        cluster.close()
        server.stop()
    print("\n| case | trainwatch time to alert | trainwatch cause | seeds' rule | |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x).replace("|", "/") for x in r) + " |")


if __name__ == "__main__":
    main()
