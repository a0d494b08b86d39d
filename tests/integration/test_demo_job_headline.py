"""The demo tells the truth: `scripts/demo`'s job (examples/demo_training.py, 8 ranks over
two in-process node agents pushing to the real server on the demo's own config) is polled
through the job API and its page's live headline while it runs. Rank 6 straggles on the
steps where (step // 60) % 3 == 2; during those it must be named a straggler, no other rank
ever, and the headline is green (up, no warning) the rest of the time.

The short form: 230 steps (about 2.5 min), one straggling phase (steps 120-179) between two
healthy stretches. bench/demo_headline.py runs the same poll for 10 minutes.
"""
import os
import pathlib

from demo_poll import DemoRun, judge

ROOT = pathlib.Path(__file__).resolve().parents[2]

BUILD = ROOT / os.environ.get("TRAINWATCH_BUILD", "build")
STEPS = 230


def test_demo_names_rank_6_only_while_it_straggles_and_is_green_otherwise(start_server, tmp_path):
    run = DemoRun(ROOT, BUILD, tmp_path, start_server, steps=STEPS)
    try:
        run.start()
        polls = run.poll_until_done(interval=3.0, timeout=STEPS * 0.5 + 60 * 0.5 + 120, on_poll=print)
    finally:
        run.stop()
    verdict = judge(polls)
    print(verdict.summary())
    assert verdict.false_names == [], verdict.false_names
    assert verdict.not_green == [], verdict.not_green
    assert verdict.phase_polls >= 5, "the poll saw too little of rank 6's straggling phase"
    assert verdict.missed == [], verdict.missed
