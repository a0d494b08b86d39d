"""The demo's job for 10 minutes, polled as a person watching its page would (the long form
of tests/integration/test_demo_job_headline.py): the real server on examples/demo.yaml and
examples/demo_training.py's 8 ranks with their two in-process node agents. Prints, per run,
the polls, how many of the polls inside rank 6's straggling phases (past the stated
detection delay) named rank 6, the false names (any other rank named, ever) and the polls
outside the phases whose headline was not green.

  /usr/bin/python3 bench/jobs/bench_demo_headline.py [--minutes 10] [--interval 5] [--runs 1]
"""
import argparse
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from conftest import Server  # noqa: E402
from demo_poll import CLEAR_STEPS, DETECT_STEPS, DemoRun, judge  # noqa: E402

# One cycle of examples/demo_training.py: 120 steps at 0.5 s, 60 straggling steps at 1.0 s.
CYCLE_STEPS, CYCLE_S = 180, 120.0


def one_run(minutes, interval):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        servers = []

        def start_server(text):
            (tmp / "trainwatch.yaml").write_text(text)
            servers.append(Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start())
            return servers[-1]

        steps = int(minutes * 60 / CYCLE_S * CYCLE_STEPS) + 10
        run = DemoRun(ROOT, ROOT / os.environ.get("TRAINWATCH_BUILD", "build"), tmp, start_server, steps)
        try:
            run.start()
            polls = run.poll_until_done(interval=interval, timeout=minutes * 60 + 180)
        finally:
            run.stop()
            for s in servers:
                s.stop()
        return judge(polls)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--interval", type=float, default=5)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(f"detection delay {DETECT_STEPS} steps into a phase, clearing delay {CLEAR_STEPS} steps after it")
    for i in range(args.runs):
        v = one_run(args.minutes, args.interval)
        print(f"run {i + 1}: {v.summary()}", flush=True)
        for p in v.false_names + v.not_green + v.missed:
            print(f"  at {p.at} s, rank 6 at step {p.step}: named {p.named}, {p.pill}, {p.cause!r}")


if __name__ == "__main__":
    main()
