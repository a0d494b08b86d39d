"""One failure, one alert, with a link: a real Alertmanager fed both by trainwatch's own
`alertmanager` channel and by a real Prometheus evaluating the shipped rules on the
server's and the agent's /metrics, with the inhibit rule docs/configuration.md gives. A
torchrun job (4 ranks, torch 1.13, gloo) loses one rank to SIGKILL: Alertmanager holds
exactly one active alert, which names that rank and links to the job's page under
server.public_url; the rules' alert for the same failure is there but suppressed; a new run
of the job resolves them."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

import pytest
import yaml

from conftest import BINARY, ROOT, wait_for
from test_alertmanager import ALERTMANAGER, free_port
from test_jobs import BUILD, PY, REPORT_EVERY, TOKEN, Webhook, rendezvous_port

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = ROOT / "deploy" / "prometheus" / "trainwatch.rules.yml"
PUBLIC_URL = "https://trainwatch.example.org"


def documented_inhibit_rules():
    """The inhibit_rules block of docs/configuration.md, as an operator pastes it."""
    text = (ROOT / "docs" / "configuration.md").read_text()
    blocks = re.findall(r"^```yaml\n(inhibit_rules:\n.*?)^```$", text, re.M | re.S)
    assert len(blocks) == 1, "docs/configuration.md gives one inhibit_rules block"
    return yaml.safe_load(blocks[0])["inhibit_rules"]


def get_json(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


class Receivers:
    """Alertmanager with the documented inhibit rules, and Prometheus with the shipped rules
    scraping `targets` and sending to it."""

    def __init__(self, tmp_path, am_port, targets):
        self.am_port, self.prom_port = am_port, free_port()
        self.am = f"http://127.0.0.1:{self.am_port}"
        (tmp_path / "alertmanager.yml").write_text(yaml.safe_dump({
            "route": {"receiver": "nobody"}, "receivers": [{"name": "nobody"}],
            "inhibit_rules": documented_inhibit_rules()}))
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{self.am_port}"]}]}]},
            "scrape_configs": [{"job_name": "trainwatch", "static_configs": [{"targets": targets}]}]}))
        self.procs = [
            subprocess.Popen([ALERTMANAGER, f"--config.file={tmp_path / 'alertmanager.yml'}",
                              f"--storage.path={tmp_path / 'am'}", f"--web.listen-address=127.0.0.1:{self.am_port}",
                              "--cluster.listen-address="], stdout=subprocess.DEVNULL,
                             stderr=open(tmp_path / "alertmanager.log", "wb")),
            subprocess.Popen(["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
                              f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                              f"--web.listen-address=127.0.0.1:{self.prom_port}"], stdout=subprocess.DEVNULL,
                             stderr=open(tmp_path / "prometheus.log", "wb"))]

    def alerts(self):
        """Alertmanager's alerts that are not resolved: (active, suppressed)."""
        try:
            alerts = get_json(self.am + "/api/v2/alerts")
        except OSError:
            return None
        return ([a for a in alerts if a["status"]["state"] == "active"],
                [a for a in alerts if a["status"]["state"] == "suppressed"])

    def close(self):
        for p in self.procs:
            p.terminate()
            p.wait(timeout=30)


def torchrun(env, tmp_path, run):
    """job_rank.py x 4 under torchrun, no restarts: a killed rank ends this run."""
    # torch 1.13's launcher on Python 3.11 fails at start with its default --redirects/--tee.
    return subprocess.Popen([PY, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "4",
                             "--rdzv_backend", "static", "--rdzv_id", f"{run}-{os.getpid()}",
                             "--master_addr", "127.0.0.1", "--master_port", str(rendezvous_port()),
                             "--max_restarts", "0", "--redirects", "9:0", "--tee", "9:0",
                             os.path.join(HERE, "job_rank.py")],
                            env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"{run}.log", "wb"),
                            start_new_session=True)


def stop(process):
    if process is not None and process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


@pytest.fixture
def receivers_needed():
    if not os.path.exists(ALERTMANAGER):
        pytest.skip("prometheus-alertmanager is not installed")


def test_a_killed_rank_is_one_alert_naming_it_with_the_job_page(receivers_needed, start_server, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    am_port = free_port()  # the channel needs Alertmanager's address before the server starts
    hook = Webhook()
    server = start_server(f"""
server:
  public_url: {PUBLIC_URL}/
  allow_local_channel_targets: true   # Alertmanager and the webhook listen on loopback
notifications:
  - {{name: am, type: alertmanager, url: "http://127.0.0.1:{am_port}", resend_every: 2s}}
  - {{name: hook, type: webhook, url: "http://127.0.0.1:{hook.port}/hook"}}
jobs:
  token: ${{TRAINWATCH_TOKEN}}
monitors:
  - name: tiny
    type: job
    world_size: 4
    notify: [am, hook]
    thresholds:
      step_timeout_min: 3s
""")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="tiny", TRAINWATCH_DIR=str(tmp_path / "slots"),
               TRAINWATCH_NODE="node-a", TRAINWATCH_TOKEN=TOKEN, CONTROL_DIR=str(tmp_path),
               TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY))
    agent_log = tmp_path / "agent.log"
    agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                              "--report-every", str(REPORT_EVERY)], env=env, stderr=open(agent_log, "wb"))
    receivers = first = second = None
    try:
        agent_address = wait_for(lambda: (m := re.search(r"on http://([0-9.:]+)/health", agent_log.read_text()))
                                 and m.group(1), what="the agent's port")
        receivers = Receivers(tmp_path, am_port, [server.base.split("//")[1], agent_address])
        wait_for(lambda: receivers.alerts() is not None, timeout=30, what="Alertmanager to answer")

        def job():
            status, j, _ = server.get("/api/v1/jobs/tiny")
            return j if status == 200 else None

        first = torchrun(env, tmp_path, "first")
        j = wait_for(lambda: (j := job()) and j["status"] == "up" and len(j["ranks"]) == 4
                     and all(r["step"] > 5 for r in j["ranks"]) and j, timeout=120, interval=0.5,
                     what="the job to train")
        victim = next(r for r in j["ranks"] if r["rank"] == 2)
        os.kill(victim["pid"], signal.SIGKILL)

        # The channel's alert, and then the rules' (Prometheus scrapes and evaluates every
        # second), which the inhibit rule holds back.
        wait_for(lambda: (a := receivers.alerts()) and a[1], timeout=60, interval=0.5,
                 what="the rules' alert to arrive, suppressed")
        active, suppressed = receivers.alerts()
        assert len(active) == 1, [a["labels"] for a in active]
        [alert] = active
        assert alert["labels"]["alertname"] == "TrainwatchJobDown" and alert["labels"]["source"] == "trainwatch"
        assert (alert["labels"]["training_job"], alert["labels"]["rank"], alert["labels"]["node"]) == \
            ("tiny", "2", "node-a"), alert["labels"]
        assert alert["labels"]["severity"] == "page"
        assert alert["generatorURL"] == f"{PUBLIC_URL}/jobs/tiny", alert
        assert f"rank 2 (node-a, pid {victim['pid']})" in alert["annotations"]["description"], alert
        down = wait_for(hook.downs, timeout=30, what="the webhook's DOWN")[0]
        assert down["url"] == f"{PUBLIC_URL}/jobs/tiny" and down["cause"].startswith("rank 2 (node-a"), down
        rules_alert = next(a for a in suppressed if a["labels"]["alertname"] == "TrainwatchJobDown")
        assert rules_alert["labels"]["rank"] == "2" and rules_alert["labels"]["instance"], rules_alert
        # The peers that fell after it, and the dead job's silence, raise nothing more.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            active, _ = wait_for(receivers.alerts, what="Alertmanager")
            assert [a["labels"]["source"] for a in active] == ["trainwatch"], [a["labels"] for a in active]
            time.sleep(0.5)

        # The job submitted again trains: both alerts resolve.
        stop(first)
        second = torchrun(env, tmp_path, "second")
        wait_for(lambda: (a := receivers.alerts()) is not None and a == ([], []), timeout=120, interval=0.5,
                 what="the alerts to resolve once the job trains again")
    finally:
        stop(first)
        stop(second)
        agent.terminate()
        agent.wait(timeout=30)
        if receivers:
            receivers.close()
        hook.close()
