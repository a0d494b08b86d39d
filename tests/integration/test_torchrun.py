"""Jobs under torchrun (Debian's torch 1.13, CPU, gloo, 4 ranks on one node), watched by a
sidecar agent: with --max_restarts 1 a SIGKILLed worker is named, torchrun restarts the
group as a new attempt, the incident closes once that attempt trains, and the ledger holds
one interruption with what it cost; a rank stuck in a Python function is named with that
function while the others wait in all_reduce."""
import contextlib
import os
import signal
import subprocess
import time

from conftest import BINARY, wait_for
from test_jobs import BUILD, HOOKED, PY, REPORT_EVERY, TOKEN, Webhook, process_events_allowed, rendezvous_port

HERE = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def torchrun_job(start_server, tmp_path, monkeypatch, max_restarts):
    """A server with a webhook, a sidecar agent, and job_rank.py x 4 under torchrun:
    yields (server, hook, control dir, trains(attempt) -> the job once every rank of that
    attempt is past step 5 and it is up, else None)."""
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    hook = Webhook()
    server = start_server(HOOKED.replace("{port}", str(hook.port)))
    slots, control = tmp_path / "slots", tmp_path / "control"
    control.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="tiny", TRAINWATCH_DIR=str(slots),
               TRAINWATCH_NODE="node-a", TRAINWATCH_TOKEN=TOKEN, CONTROL_DIR=str(control),
               TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY))
    agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                              "--report-every", str(REPORT_EVERY)], env=env,
                             stderr=open(tmp_path / "agent.log", "wb"))
    # torch 1.13's launcher on Python 3.11 fails at start with its default --redirects/--tee.
    # A static rendezvous on a port below the ephemeral range, not --standalone: standalone
    # picks each attempt's MASTER_PORT by binding port 0 and releasing it, and any socket
    # opened before rank 0 binds it may take it (CI saw "Address already in use" on a
    # restart); with a static rendezvous the ranks of every attempt use the launcher's store.
    torchrun = subprocess.Popen([PY, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "4",
                                 "--rdzv_backend", "static", "--rdzv_id", f"tiny-{os.getpid()}",
                                 "--master_addr", "127.0.0.1", "--master_port", str(rendezvous_port()),
                                 "--max_restarts", str(max_restarts), "--redirects", "9:0", "--tee", "9:0",
                                 os.path.join(HERE, "job_rank.py")],
                                env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "torchrun.log", "wb"),
                                start_new_session=True)

    def trains(attempt):
        assert torchrun.poll() is None, (tmp_path / "torchrun.log").read_text()[-3000:]
        status, j, _ = server.get("/api/v1/jobs/tiny")
        ok = (status == 200 and j["status"] == "up" and len(j["ranks"]) == 4
              and all(r["attempt"] == attempt and r["step"] > 5 for r in j["ranks"]))
        return j if ok else None

    try:
        yield server, hook, control, trains
    finally:
        os.killpg(torchrun.pid, signal.SIGTERM)
        try:
            torchrun.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(torchrun.pid, signal.SIGKILL)
            torchrun.wait(timeout=30)
        agent.terminate()
        agent.wait(timeout=30)
        hook.close()


def test_a_torchrun_restart_is_a_new_attempt_and_one_interruption(start_server, tmp_path, monkeypatch):
    with torchrun_job(start_server, tmp_path, monkeypatch, max_restarts=1) as (server, hook, _, trains):
        j = wait_for(lambda: trains(0), timeout=120, interval=0.5, what="the first attempt to train")
        assert len(j["attempts"]) == 1 and j["attempts"][0]["launcher_attempt"] == 0, j["attempts"]
        victim = next(r for r in j["ranks"] if r["rank"] == 2)
        os.kill(victim["pid"], signal.SIGKILL)

        how = "was killed by SIGKILL" if process_events_allowed() else "vanished"
        down = wait_for(lambda: hook.downs(), timeout=30, what="the DOWN alert")
        assert down[0]["cause"].startswith(f"rank 2 (node-a, pid {victim['pid']}) {how} at step "), down[0]

        j = wait_for(lambda: trains(1), timeout=120, interval=0.5, what="the second attempt to train")
        assert [a["launcher_attempt"] for a in j["attempts"]] == [0, 1], j["attempts"]
        wait_for(lambda: [a for a in hook.alerts if a.get("event") == "up"], timeout=30,
                 what="the incident to close once the new attempt trains")
        assert len(hook.downs()) == 1, hook.downs()

        j = server.get("/api/v1/jobs/tiny")[1]
        assert len(j["interruptions"]) == 1, j["interruptions"]
        i = j["interruptions"][0]
        assert i["cause"] == ("signal" if process_events_allowed() else "vanished"), i
        if process_events_allowed():
            assert i["detail"] == "SIGKILL", i
        assert i["restarted"] and i["attempt"] == 1 and i["resumed_at"], i
        assert i["steps_lost"] == i["step"], i  # job_rank.py starts again from step 1
        assert i["gpu_hours_lost"] > 0 and 0 < j["goodput"]["ratio"] < 1, (i, j["goodput"])
        table = server.get("/api/v1/interruptions")[1]
        assert table["count"] == 1 and table["causes"][0]["share"] == 1.0, table
        metrics = server.get("/metrics")[1]
        assert f'trainwatch_job_interruptions_total{{training_job="tiny",cause="{i["cause"]}"}} 1' in metrics
        status, page, _ = server.get("/jobs/tiny")
        assert status == 200 and 'id="ledger"' in page and f'<td data-label="cause">{i["cause"]} ' in page, page
        assert 'over 2 attempts' in page, page
        print(f"torchrun restart: interruption {i}")


def test_a_rank_stuck_in_python_under_torchrun_is_named_with_its_function(start_server, tmp_path, monkeypatch):
    """A soft hang under torchrun: 4 ranks under
    torch.distributed.run, rank 2 enters a function that sleeps (job_rank.py's
    fetch_next_shard, until the flag goes) before its all_reduce; one alert names rank 2
    and that function within the learned step timeout + 10 s."""
    with torchrun_job(start_server, tmp_path, monkeypatch, max_restarts=0) as (server, hook, control, trains):
        j = wait_for(lambda: trains(0), timeout=120, interval=0.5, what="the job to train")
        step_timeout = j["timeouts"]["step_ms"] / 1000
        pid = next(r["pid"] for r in j["ranks"] if r["rank"] == 2)
        (control / "stuck-2").touch()
        stuck = time.monotonic()
        downs = wait_for(lambda: hook.downs(), timeout=step_timeout + 15, what="the DOWN alert")
        elapsed = time.monotonic() - stuck
        cause = downs[0]["cause"]
        assert cause.startswith(f"rank 2 (node-a, pid {pid}) is stuck in fetch_next_shard (job_rank.py:"), cause
        assert "ranks 0-1,3 are in all_reduce (job_rank.py:" in cause, cause
        assert elapsed <= step_timeout + 10, (elapsed, step_timeout)
        (control / "stuck-2").unlink()
        wait_for(lambda: [a for a in hook.alerts if a.get("event") == "up"], timeout=30,
                 what="the incident to close once rank 2 returns")
        assert len(hook.downs()) == 1, hook.downs()
        print(f"soft hang under torchrun: named in {elapsed:.1f} s (step timeout {step_timeout:.0f} s): {cause}")
