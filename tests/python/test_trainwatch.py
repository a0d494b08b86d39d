"""The trainwatch package in real processes: slots, the in-process agent, heartbeats,
exit and failure hooks, bad input, and a real 2-rank PyTorch gloo job."""
import http.server
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import free_port

PY = "/usr/bin/python3"


def get_health(port, timeout=2):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def wait_for(pred, limit=30.0):
    """Polls pred (an observable condition, not a deadline) until true; bounded."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met within %.0f s" % limit)


def start_agent(env):
    import trainwatch._native as native
    os.makedirs(env["TRAINWATCH_DIR"], exist_ok=True)
    port = native.start_agent(env["TRAINWATCH_JOB"], env["TRAINWATCH_DIR"], "127.0.0.1", 0)
    assert port
    return port


def run_script(code, env, **kw):
    return subprocess.run([PY, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120, **kw)


def test_step_fast_path_and_health(env):
    port = free_port()
    code = f"""
        import trainwatch, time, sys
        tw = trainwatch.init(health_port={port}, health_host="127.0.0.1")
        for s in range(10):
            tw.step(s, loss=0.5, loss_scale=1024.0, overflow=(s == 3), tokens=100, samples=2, grad_norm=1.5)
        tw.gauge("lr", 1e-4)
        print("ready", flush=True)
        sys.stdin.readline()
    """
    p = subprocess.Popen([PY, "-c", textwrap.dedent(code)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        status, h = wait_for(lambda: (lambda r: r if r[1]["ranks"] and r[1]["ranks"][0]["step"] == 9 else None)(
            get_health(port)))
        assert status == 200, h
        assert h["status"] == "ok"
        t = h["training"]
        assert t["step"] == 9 and t["loss"] == 0.5 and t["loss_scale"] == 1024.0 and t["overflow_steps"] == 1
        r0 = h["ranks"][0]
        assert r0["tokens"] == 1000 and r0["samples"] == 20 and r0["grad_norm"] == 1.5
        assert r0["gauges"] == {"lr": 1e-4}
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics") as r:
            text = r.read().decode()
        assert 'trainwatch_rank_tokens_total{training_job="pytest",rank="0"} 1000' in text
    finally:
        p.stdin.write("\n")
        p.stdin.flush()
        p.wait(30)
    assert p.returncode == 0


def test_finished_at_exit_and_failed_on_unhandled_exception(env):
    port = start_agent(env)
    ok = run_script("""
        import trainwatch
        tw = trainwatch.init(rank=0, world_size=2)
        tw.step(1, loss=1.0)
    """, env)
    assert ok.returncode == 0, ok.stderr
    bad = run_script("""
        import trainwatch
        tw = trainwatch.init(rank=1, world_size=2)
        tw.step(3, loss=2.0)
        raise RuntimeError("CUDA out of memory on purpose")
    """, env)
    assert bad.returncode == 1
    assert "CUDA out of memory on purpose" in bad.stderr  # the normal traceback still prints
    status, h = wait_for(lambda: (lambda r: r if len(r[1]["ranks"]) == 2 else None)(get_health(port)))
    ranks = {r["rank"]: r for r in h["ranks"]}
    assert ranks[0]["status"] == "finished"
    assert ranks[1]["status"] == "failed"
    assert "RuntimeError: CUDA out of memory on purpose" in ranks[1]["error"]
    assert status == 503
    assert any(r["code"] == "rank_failed" and "rank 1 failed" in r["message"] for r in h["reasons"])


def test_checkpoint_context_and_heartbeat_pings(env, tmp_path):
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    env = dict(env, CHECKPOINT_HEARTBEAT_URL=base + "/ckpt", STEP_HEARTBEAT_URL=base + "/step",
               TRAINWATCH_PING_EVERY="5")
    port = start_agent(env)
    r = run_script(f"""
        import trainwatch
        tw = trainwatch.init()
        for s in range(1, 11):
            tw.step(s, loss=1.0)
        with tw.checkpoint(10, path="{tmp_path}/ck") as ck:
            open("{tmp_path}/ck", "w").write("x" * 100)
            ck.set_bytes(100)
        try:
            with tw.checkpoint(11):
                raise OSError("No space left on device")
        except OSError:
            pass
    """, env)
    server.shutdown()
    assert r.returncode == 0, r.stderr
    assert hits.count("/step") == 2, hits
    assert hits.count("/ckpt?step=10") == 1, hits
    _, h = get_health(port)
    rank = h["ranks"][0]
    assert rank["last_checkpoint_step"] == 10
    assert "No space left on device" in rank["error"]
    assert h["training"]["last_checkpoint_step"] == 10


def test_ping_never_raises_and_never_blocks():
    import trainwatch
    t0 = time.perf_counter()
    assert trainwatch.ping("http://127.0.0.1:1/unreachable") is True
    assert trainwatch.ping(None) is False
    # Justified timing: "never blocks" is the behaviour; a retrying or waiting ping would take
    # seconds, a refused loopback connect takes microseconds, so 0.1 s cannot be flaky.
    assert time.perf_counter() - t0 < 0.1


@pytest.mark.parametrize("var,value,expect", [
    ("WORLD_SIZE", "eight", "WORLD_SIZE='eight' is not a number"),
    ("RANK", "4", "RANK 4 is not below WORLD_SIZE 2"),
])
def test_bad_environment_is_one_line_and_training_goes_on(env, var, value, expect):
    env = dict(env, WORLD_SIZE="2", RANK="0")
    env[var] = value
    r = run_script("""
        import trainwatch
        tw = trainwatch.init()
        for s in range(100):
            tw.step(s, loss=0.1)
        print("trained", tw.enabled)
    """, env)
    assert r.returncode == 0
    assert r.stdout.strip() == "trained False"
    lines = [l for l in r.stderr.splitlines() if l.startswith("trainwatch:")]
    assert len(lines) == 1 and expect in lines[0], r.stderr


def test_unwritable_dir_and_port_in_use(env, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env = dict(env, TRAINWATCH_DIR=str(blocker / "sub"))
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = run_script(f"""
            import trainwatch
            tw = trainwatch.init(health_port={port}, health_host="127.0.0.1")
            tw.step(1, loss=1.0)
            print("trained")
        """, env)
    assert r.returncode == 0 and r.stdout.strip() == "trained"
    lines = [l for l in r.stderr.splitlines() if l.startswith("trainwatch:")]
    assert len(lines) == 2, r.stderr
    assert "cannot create directory" in lines[0]
    assert "health server not started" in lines[1]


GLOO_RANK = """
import os, sys, time, torch, torch.distributed as dist
import trainwatch
dist.init_process_group("gloo")
rank = dist.get_rank()
tw = trainwatch.init(health_port=int(os.environ["HEALTH_PORT"]), health_host="127.0.0.1")
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(1, 21):
    x = torch.randn(16, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    opt.step()
    tw.step(step, loss=loss.item(), samples=16)
if rank == 0:
    with tw.checkpoint(20, path=os.environ["CKPT"]):
        torch.save(model.state_dict(), os.environ["CKPT"])
dist.barrier()
print("synced", flush=True)
# Past the last collective: keep stepping locally so rank 0 (the agent's host) outlives rank 1.
step = 20
while True:
    step += 1
    tw.step(step, loss=0.1)
    time.sleep(0.01)
"""


def test_two_rank_gloo_job_and_a_killed_rank(env, tmp_path):
    health_port = free_port()
    procs_port = str(free_port())
    procs = []
    for rank in (0, 1):
        e = dict(env, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=procs_port, HEALTH_PORT=str(health_port), CKPT=str(tmp_path / "model.pt"))
        procs.append(subprocess.Popen([PY, "-c", GLOO_RANK], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "synced", p.stderr.read() if p.poll() is not None else ""
        status, h = wait_for(lambda: (lambda r: r if r[0] == 200 and len(r[1]["ranks"]) == 2 and all(
            x["step"] > 20 for x in r[1]["ranks"]) else None)(get_health(health_port)))
        assert h["training"]["workers_alive"] == 2
        assert h["training"]["world_size"] == 2
        assert h["training"]["last_checkpoint_step"] == 20
        assert h["rendezvous"] == {"host": "127.0.0.1", "port": int(procs_port), "listening": True}
        assert all(r["samples"] == 320 for r in h["ranks"])

        victim = procs[1].pid
        procs[1].send_signal(signal.SIGKILL)
        procs[1].wait()
        status, h = wait_for(lambda: (lambda r: r if r[0] == 503 else None)(get_health(health_port)), limit=5)
        assert any(r["code"] == "rank_gone" and f"rank 1 (pid {victim}) is gone" in r["message"]
                   for r in h["reasons"]), h["reasons"]
        assert h["training"]["workers_alive"] == 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def test_collectives_are_marked_and_phases_declared(env, tmp_path):
    """init() after `import torch.distributed` wraps its collectives (each call marks the
    rank's slot), a declared phase restores the one before, and TRAINWATCH_COLLECTIVES=off
    leaves torch alone."""
    code = """
        import os, sys
        import torch, torch.distributed as dist
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1], RANK="0", WORLD_SIZE="1")
        dist.init_process_group("gloo", rank=0, world_size=1)
        original = dist.all_reduce
        import trainwatch
        tw = trainwatch.init()
        wrapped = dist.all_reduce is not original
        print("wrapped", wrapped, getattr(dist.all_reduce, "__wrapped__", None) is original, flush=True)
        t = torch.ones(2)
        dist.all_reduce(t)
        dist.barrier()
        print("result", t.tolist(), dist.all_reduce.__name__, flush=True)
        with tw.phase("eval"):
            print("phase", tw._phase, flush=True)
        print("phase", tw._phase, flush=True)
        with tw.collective("broadcast"):
            pass
        print("again", trainwatch.watch_collectives(), flush=True)
    """
    port = str(free_port())
    out = subprocess.run([PY, "-c", textwrap.dedent(code), port], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "wrapped True True", out.stdout
    assert lines[1] == "result [1.0, 1.0] all_reduce", out.stdout
    assert lines[2:4] == ["phase eval", "phase train"], out.stdout
    assert lines[4].startswith("again ") and int(lines[4].split()[1]) > 10, out.stdout
    off = subprocess.run([PY, "-c", textwrap.dedent(code), str(free_port())],
                         env=dict(env, TRAINWATCH_COLLECTIVES="off"), capture_output=True, text=True, timeout=120)
    assert off.returncode == 0, off.stderr
    assert off.stdout.splitlines()[0] == "wrapped False False", off.stdout
