"""Prometheus as operators run it, against the real server and a real node agent after an
interruption has closed (a rank killed, then its next attempt training), the agent on a
GPU node of 8 GPUs and 2 InfiniBand ports (the fake NVML and sysfs of gpu_node.py):
`promtool check metrics` finds nothing on either /metrics, a real Prometheus scrape selects the training
job with {training_job="..."} while `job` stays the scrape job's, the shipped rules load
and evaluate there, and every metric the shipped Grafana dashboard and rules name exists."""
import json
import os
import pathlib
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import yaml

from conftest import BINARY, ROOT, wait_for
from gpu_node import GpuNode
from test_alertmanager import free_port
from test_jobs import BUILD, HERE, PY, REPORT_EVERY, TOKEN, rendezvous_port

DEPLOY = ROOT / "deploy"
RULES = DEPLOY / "prometheus" / "trainwatch.rules.yml"
DASHBOARD = DEPLOY / "grafana" / "trainwatch.json"
CONFIG = """
jobs:
  auto_create: true
  token: ${TRAINWATCH_TOKEN}
monitors:
  - name: nightly-eval
    type: heartbeat
    period: 1h
    grace: 5m
    token: nightly-eval-token
"""


def promtool(*args, stdin=None):
    p = subprocess.run(["promtool", *args], input=stdin, capture_output=True, text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


def test_the_rules_are_valid_and_pass_their_unit_tests():
    assert promtool("check", "rules", str(RULES))[0] == 0
    code, out = promtool("test", "rules", str(RULES.with_name("trainwatch.rules.test.yml")))
    assert code == 0, out


def metric_names(text):
    """Every metric a PromQL expression names (trainwatch's and the process_ ones)."""
    return set(re.findall(r"\b((?:trainwatch|process)_[a-z0-9_]+)", text))


def exported(metrics_text):
    names = set()
    for line in metrics_text.splitlines():
        if line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return names


def get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def query(prometheus, promql):
    """The result of an instant query; [] while Prometheus is still starting."""
    try:
        body = json.loads(get(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": promql})))
    except (urllib.error.URLError, ConnectionError):
        return []
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_prometheus_scrapes_clean_series_named_by_training_job(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    assert get(server.base + "/ping/nightly-eval-token").strip() == "OK"
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="solo", TRAINWATCH_DIR=str(tmp_path / "slots"),
               TRAINWATCH_NODE="node-a", TRAINWATCH_TOKEN=TOKEN, CONTROL_DIR=str(tmp_path),
               TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY), MASTER_ADDR="127.0.0.1", WORLD_SIZE="1", RANK="0",
               LOCAL_RANK="0", **GpuNode(tmp_path).env())
    agent_log = tmp_path / "agent.log"
    agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                              "--report-every", str(REPORT_EVERY)], env=env, stderr=open(agent_log, "wb"))
    prometheus = rank = None

    def start_rank(attempt):
        return subprocess.Popen([PY, str(HERE / "job_rank.py")],
                                env={**env, "TRAINWATCH_ATTEMPT": str(attempt), "MASTER_PORT": str(rendezvous_port())},
                                stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"rank{attempt}.log", "wb"))

    def job():
        status, j, _ = server.get("/api/v1/jobs/solo")
        return j if status == 200 else None

    try:
        agent_base = "http://" + wait_for(lambda: (m := re.search(r"on http://([0-9.:]+)/health", agent_log.read_text()))
                                          and m.group(1), what="the agent's port")
        rank = start_rank(0)
        wait_for(lambda: (j := job()) and j["ranks"] and j["ranks"][0]["step"] > 5, timeout=90, interval=0.5,
                 what="the first attempt to train")
        rank.kill()
        rank.wait(timeout=30)
        rank = start_rank(1)
        wait_for(lambda: (j := job()) and j["interruptions"] and j["interruptions"][0]["resumed_at"], timeout=90,
                 interval=0.5, what="the interruption to close as attempt 1 trains")

        server_metrics, agent_metrics = get(server.base + "/metrics"), get(agent_base + "/metrics")
        for text in (server_metrics, agent_metrics):
            assert promtool("check", "metrics", stdin=text) == (0, "")
        assert re.search(r'^trainwatch_interruption_gpu_seconds_lost_total\{cause="\w+"\} [0-9.e-]+$', server_metrics,
                         re.M), server_metrics
        assert 'trainwatch_heartbeat_period_seconds{monitor="nightly-eval"} 3600\n' in server_metrics
        assert 'trainwatch_heartbeat_grace_seconds{monitor="nightly-eval"} 300\n' in server_metrics
        assert not re.search(r'[{,]job="', server_metrics + agent_metrics), "a label Prometheus would rename"

        # Everything the dashboard and the rules name is there (a histogram by its _bucket).
        names = exported(server_metrics) | exported(agent_metrics)
        dashboard = json.loads(DASHBOARD.read_text())
        promql = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
        promql += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
        promql += [r["expr"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]
        assert not metric_names("\n".join(promql)) - names

        # A real Prometheus scraping both, with the shipped rules.
        port = free_port()
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [{"job_name": "trainwatch", "static_configs": [
                {"targets": [server.base.split("//")[1], agent_base.split("//")[1]]}]}]}))
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / "prometheus.log", "wb"))
        base = f"http://127.0.0.1:{port}"
        series = wait_for(lambda: query(base, 'trainwatch_job_goodput_ratio{training_job="solo"}'), timeout=60,
                          interval=0.5, what="Prometheus to scrape the job's goodput")
        assert series[0]["metric"]["job"] == "trainwatch" and "exported_job" not in series[0]["metric"], series
        steps = wait_for(lambda: query(base, 'count by (training_job) (trainwatch_rank_step)'), timeout=30,
                         interval=0.5, what="Prometheus to scrape the agent")
        assert [s["metric"] for s in steps] == [{"training_job": "solo"}]
        groups = wait_for(lambda: [r for g in json.loads(get(base + "/api/v1/rules"))["data"]["groups"]
                                   for r in g["rules"] if r.get("lastEvaluation", "").startswith("2")]
                          and json.loads(get(base + "/api/v1/rules"))["data"]["groups"], timeout=30,
                          interval=0.5, what="the rules to be evaluated")
        assert [(r["name"], r["health"]) for g in groups for r in g["rules"] if r["health"] != "ok"] == []
    finally:
        for process in (prometheus, rank, agent):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
