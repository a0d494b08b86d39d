#!/usr/bin/env python3
"""What a stack capture costs the rank: the pause a busy Python rank, 50 frames deep, sees
while the agent's capture path (stack_capture_driver, agent/stack_capture.h) asks it for
its stack, beside the tools one uses today on a hung rank (gdb and eu-stack, which stop
the process to walk its native stack), in the same run.

The rank spins in its innermost frame reading CLOCK_MONOTONIC and records every gap over
20 us; a capture's pause is the longest gap that overlaps the capture's window. For gdb and
eu-stack the window is the tool's whole run (they stop the rank somewhere inside it); for
trainwatch it is the 2 ms from the moment the capture starts, since it asks first and
then only waits, outside the rank, for the dump to land (the signal handler runs as soon as
the signal is delivered; the sampler thread wakes as soon as the FIFO has a byte). Both
of trainwatch's ways are measured: the sampler thread (the default: no signal, the dump is
written by a thread of the rank's own that does not stop the others) and
TRAINWATCH_STACK_SIGNAL=SIGUSR2 (faulthandler in the main thread's signal handler). The same statistic over windows of the same length between captures
is the machine's noise floor: what the rank loses anyway to the scheduler.

  /usr/bin/python3 bench/stacks/bench_stacks.py [BUILD] [--runs 3] [--captures 100] [--peer-captures 20] [--torch]
BUILD defaults to build (the capture path is the same in any build type: the pause is the rank's).
--torch: the rank imports torch and runs a matmul first, so it has torch's threads (15 here)
and libraries, as a real rank does; eu-stack then walks them all.
"""
import argparse
import array
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

DEPTH = 50
GAP_NS = 20_000
SIGNAL_WINDOW_NS = 2_000_000

RANK = textwrap.dedent("""
    import array, os, sys, time, trainwatch
    depth, out, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    if sys.argv[4] == "torch":  # a rank's usual threads: torch's intra-op pool, started by a matmul
        import torch
        torch.set_num_threads(8)
        x = torch.ones(512, 512)
        (x @ x).sum()
    tw = trainwatch.init(job="bench", rank=0, world_size=1)
    tw.step(1)

    def frame(n):
        if n > 1:
            return frame(n - 1)
        gaps, clock, spins = array.array("q"), time.perf_counter_ns, 0
        print("ready", flush=True)
        last = clock()
        while True:
            now = clock()
            if now - last > %d:
                gaps.extend((last, now - last))
            last = now
            spins += 1
            if spins & 0xFFFF == 0 and os.path.exists(stop):
                break
        with open(out, "wb") as f:
            gaps.tofile(f)

    frame(depth - 1)  # with <module>, `depth` frames
""" % GAP_NS)


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def pauses(gaps, windows):
    """The longest recorded gap overlapping each window; 0 when none did."""
    out = []
    for start, end in windows:
        worst = 0
        for i in range(0, len(gaps), 2):
            g_start, g_len = gaps[i], gaps[i + 1]
            if g_start < end and g_start + g_len > start:
                worst = max(worst, g_len)
        out.append(worst)
    return out


def run_rank(build, tmp, capture, kind, stack_signal):
    """Starts the rank (stack_signal: its TRAINWATCH_STACK_SIGNAL, "" for the sampler), lets
    `capture(pid, stack_file)` return its windows, and gives back the pauses of those windows
    and of as many quiet windows between them."""
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"), TRAINWATCH_DIR=os.path.join(tmp, "slots"),
               TRAINWATCH_STACK_SIGNAL=stack_signal)
    out, stop = os.path.join(tmp, "gaps"), os.path.join(tmp, "stop")
    for path in (out, stop):
        if os.path.exists(path):
            os.unlink(path)
    rank = subprocess.Popen([sys.executable, "-c", RANK, str(DEPTH), out, stop, kind], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert rank.stdout.readline().strip() == "ready"
        stack_file = os.path.join(tmp, "slots", str(os.geteuid()), f"bench.{rank.pid}.stack")
        windows = capture(rank.pid, stack_file)
    finally:
        open(stop, "w").close()
        rank.wait(timeout=60)
    gaps = array.array("q")
    with open(out, "rb") as f:
        gaps.frombytes(f.read())
    quiet = []
    for (s1, e1), (s2, _) in zip(windows, windows[1:]):
        length, middle = e1 - s1, (e1 + s2) // 2
        quiet.append((middle - length // 2, middle + length // 2))
    return pauses(gaps, windows), pauses(gaps, quiet)


def trainwatch_capture(driver, count, way):
    def capture(pid, stack_file):
        lines = subprocess.run([driver, stack_file, str(pid), str(count), "20"], check=True,
                               capture_output=True, text=True).stdout.splitlines()
        windows = []
        for line in lines:
            start, end, frames, _truncated, note = line.split(" ", 4)
            assert int(frames) >= 48 and note == "-", f"a capture ({way}) came back without the stack: {line}"
            windows.append((int(start), int(start) + SIGNAL_WINDOW_NS))
        return windows
    return capture


def tool_capture(argv, count):
    def capture(pid, _stack_file):
        windows = []
        for _ in range(count):
            start = time.monotonic_ns()
            done = subprocess.run(argv + [str(pid)], capture_output=True, text=True, timeout=60)
            end = time.monotonic_ns()
            assert done.returncode in (0, 1) and done.stdout, done.stderr  # 1: frames cut at -n
            windows.append((start, end))
            time.sleep(0.02)
        return windows
    return capture


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--captures", type=int, default=100)
    ap.add_argument("--peer-captures", type=int, default=20)
    ap.add_argument("--torch", action="store_true", help="a rank with torch's threads and libraries")
    ap.add_argument("--no-gdb", action="store_true", help="leave gdb out (seconds a capture)")
    args = ap.parse_args()
    driver = os.path.join(args.build, "bench", "stacks", "stack_capture_driver")
    # name -> (capture, the rank's TRAINWATCH_STACK_SIGNAL); the first is the ratio's base.
    tools = {"trainwatch (SIGUSR2 + faulthandler)": (trainwatch_capture(driver, args.captures, "signal"), "SIGUSR2"),
             "trainwatch (sampler thread, FIFO request: the default)": (trainwatch_capture(driver, args.captures, "sampler"), "")}
    if shutil.which("gdb") and not args.no_gdb:
        tools["gdb -batch thread apply all bt"] = (tool_capture(
            ["gdb", "-nx", "-batch", "-ex", "thread apply all bt", "-p"], args.peer_captures), "")
    if shutil.which("eu-stack"):
        # As the agent runs it for native frames (agent/native_capture.h).
        tools["eu-stack -m -n 17 -p (the agent's native frames)"] = (tool_capture(
            ["eu-stack", "-m", "-n", "17", "-p"], args.peer_captures), "")

    results = {name: [] for name in tools}
    floor = {name: [] for name in tools if name.startswith("trainwatch")}
    # The slots and stack files live in /dev/shm by default: the dump is written there.
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        for run in range(args.runs):
            for name, (capture, stack_signal) in tools.items():  # interleaved: each sees every run's machine
                taken, quiet = run_rank(args.build, tmp, capture, "torch" if args.torch else "plain", stack_signal)
                results[name].append((percentile(taken, 50), percentile(taken, 99), max(taken), len(taken)))
                if name in floor:
                    floor[name].append(percentile(quiet, 99))
                print(f"run {run + 1} {name}: p50 {percentile(taken, 50) / 1e3:.0f} us, "
                      f"p99 {percentile(taken, 99) / 1e3:.0f} us, max {max(taken) / 1e3:.0f} us "
                      f"over {len(taken)}", flush=True)

    ours = statistics.median(r[1] for r in results[next(iter(tools))])
    print(f"\nrank pause per capture of a {DEPTH}-frame stack{' (with torch)' if args.torch else ''}, "
          f"medians of {args.runs} runs "
          "(min-max of the runs):\n")
    print("| tool | captures a run | p50 | p99 | max | p99 ratio to trainwatch |")
    print("|---|---|---|---|---|---|")
    for name, runs in results.items():
        def cell(i):
            vals = [r[i] / 1e3 for r in runs]
            return f"{statistics.median(vals):,.0f} µs ({min(vals):,.0f}–{max(vals):,.0f})"
        p99 = statistics.median(r[1] for r in runs)
        print(f"| {name} | {runs[0][3]} | {cell(0)} | {cell(1)} | {cell(2)} | {p99 / ours:,.1f}× |")
    for name, quiet in floor.items():
        print(f"\nnoise floor beside {name} (the same statistic over quiet windows of the same length, p99): "
              f"{statistics.median(quiet) / 1e3:,.0f} µs ({min(quiet) / 1e3:,.0f}–{max(quiet) / 1e3:,.0f})")


if __name__ == "__main__":
    main()
