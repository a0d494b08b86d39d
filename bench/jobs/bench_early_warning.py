"""How soon a soft hang is told: the early warning (rank_suspected) and the page
(rank_stuck at the step timeout), on a real gloo job of 4 ranks at about 0.5 s a step
(tests/integration/test_job_early_warning.py's job), beside what the peers would do.

  /usr/bin/python3 bench/jobs/bench_early_warning.py [--rounds 3]

Each round starts a fresh server, two agents and 4 ranks, waits for training, makes rank
2 wait in its data fetch while the others wait in all_reduce, and times from that moment
to the warning and to the page at a recording webhook. The peers are not run: their
figures are their configured waits, stated beside ours (the seed's health server answers
503 once no step came for 600 s; PyTorch's NCCL watchdog aborts a collective after its
default 10 minutes, gloo's after 30)."""
import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
os.environ.setdefault("TRAINWATCH_BIN", str(ROOT / "build" / "src" / "cli" / "trainwatch"))

from conftest import Server, wait_for  # noqa: E402
from test_job_early_warning import CONFIG, PACE_S  # noqa: E402
from test_jobs import TOKEN, Cluster, Webhook, training_up  # noqa: E402


def one_round(tmp):
    os.environ["TRAINWATCH_TOKEN"] = TOKEN
    hook = Webhook()
    (tmp / "trainwatch.yaml").write_text(CONFIG.format(port=hook.port))
    server = Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start()
    cluster = None
    try:
        cluster = Cluster(tmp, server, env_extra={"STEP_PACE": str(PACE_S), "STEP_JITTER": str(2 * PACE_S)})
        wait_for(lambda: training_up(cluster), timeout=90, interval=0.5, what="training")
        time.sleep(20)  # let the job learn its step gap, as a real one has
        cluster.touch("stuck-2")
        stuck = time.monotonic()

        def first(event):
            return [a for a in hook.alerts if a.get("event") == event]

        wait_for(lambda: first("warning"), timeout=60, interval=0.05, what="the warning")
        warned = time.monotonic() - stuck
        wait_for(lambda: first("down"), timeout=120, interval=0.05, what="the page")
        paged = time.monotonic() - stuck
        return warned, paged, first("warning")[0]["cause"]
    finally:
        if cluster is not None:
            cluster.close()
        server.stop()
        hook.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    warned, paged = [], []
    for n in range(args.rounds):
        w, p, cause = one_round(pathlib.Path(tempfile.mkdtemp(prefix="tw-early-")))
        warned.append(w)
        paged.append(p)
        print(f"round {n + 1}: warning after {w:.1f} s, page after {p:.1f} s: {cause}", flush=True)

    def line(name, xs):
        return f"| {name} | {statistics.median(xs):.1f} s ({min(xs):.1f}-{max(xs):.1f}) |"

    print("| told by | median (min-max) |\n|---|---|")
    print(line("trainwatch warning (rank_suspected)", warned))
    print(line("trainwatch page (rank_stuck, step timeout)", paged))
    print("| the seed's health server (no step for 600 s) | 600 s and its poller's interval |")
    print("| PyTorch NCCL watchdog (default timeout) | 600 s |")


if __name__ == "__main__":
    main()
