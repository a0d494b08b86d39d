"""GPU and fabric faults end to end: eight real rank processes (the trainwatch module, no
PyTorch) on one node, `trainwatch agent` reading the fake libnvidia-ml.so through its real
dlopen path and a fake sysfs tree of two InfiniBand ports, the real server judging its
reports. What a person sees: which GPU each rank uses and the memory it holds there on the
job page, node-fault findings naming the node, the GPU and the ranks on it, NVIDIA's action
for an XID, an application's own XID on its rank only, a flapping port as a node finding,
and a /metrics that promtool finds clean."""
import os
import re
import subprocess
import urllib.request

from conftest import BINARY, wait_for
from gpu_node import GpuNode
from test_jobs import BUILD, HERE, PY, TOKEN, rendezvous_port
from test_prometheus import promtool

CONFIG = """
jobs:
  auto_create: true
  token: ${TRAINWATCH_TOKEN}
"""


def start_node(tmp_path, server, node):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="gpus", TRAINWATCH_DIR=str(tmp_path / "slots"),
               TRAINWATCH_NODE="node-c", TRAINWATCH_TOKEN=TOKEN, MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(rendezvous_port()), WORLD_SIZE="8", **node.env())
    log = tmp_path / "agent.log"
    agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                              "--report-every", "1"], env=env, stderr=open(log, "wb"))
    ranks = [subprocess.Popen([PY, str(HERE / "paced_rank.py")], env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"rank{r}.log", "wb"))
             for r in range(8)]
    base = "http://" + wait_for(lambda: (m := re.search(r"on http://([0-9.:]+)/health", log.read_text())) and m.group(1),
                                what="the agent's port")
    return agent, ranks, base


def job(server):
    status, j, _ = server.get("/api/v1/jobs/gpus")
    return j if status == 200 else None


def finding(j, code, **want):
    for f in j["findings"]:
        if f["code"] == code and all(f[k] == v for k, v in want.items()):
            return f
    return None


def test_gpu_faults_name_the_node_the_gpu_and_the_ranks(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    node = GpuNode(tmp_path)
    agent, ranks, agent_base = start_node(tmp_path, server, node)
    try:
        up = wait_for(lambda: (j := job(server)) and len(j["ranks"]) == 8 and
                      all(r["status"] == "training" for r in j["ranks"]) and j, timeout=60, interval=0.5,
                      what="8 ranks training")
        pid5 = next(r["pid"] for r in up["ranks"] if r["rank"] == 5)

        # Rank 5's process holds memory on GPU 5 in NVML's list: the job page shows it there.
        node.set(f"proc 5 {pid5} 71000000000")
        wait_for(lambda: (j := job(server)) and next(r for r in j["ranks"] if r["rank"] == 5)["gpu"] ==
                 {"index": 5, "memory_used_bytes": 71000000000, "source": "nvml"}, timeout=30, interval=0.5,
                 what="rank 5 found on GPU 5 by its pid")
        status, page, _ = server.get("/jobs/gpus")
        assert status == 200
        row = re.search(r'<tr data-gpu="5"[^>]*>(.*?)</tr>', page, re.S)
        assert row and "rank 5 (71.0 GB)" in row.group(1) and "00000000:15:00.0" in row.group(1), page
        assert "GPU 5, 71.0 GB" in page, "the rank's cell names its GPU and memory"

        # Faults: rows pending remap on GPU 1, the driver asking for a reboot on GPU 2, XID 79
        # on rank 5's GPU, the application's own XID 13 on GPU 6, a flapping port.
        node.set(f"proc 5 {pid5} 71000000000", "remap 1 0 1 1 0", "recovery 2 2", "xid 5 79", "xid 6 13")
        node.port("mlx5_1", "ACTIVE", 3)
        j = wait_for(lambda: (j := job(server)) and j["status"] == "down" and
                     all(finding(j, c) for c in ("gpu_row_remap_pending", "gpu_recovery_action", "ib_link_downed")) and
                     finding(j, "gpu_xid", ranks=[5]) and finding(j, "gpu_xid", ranks=[6]) and j,
                     timeout=60, interval=0.5, what="the GPU and fabric findings")
        remap = finding(j, "gpu_row_remap_pending")
        assert remap["severity"] == "down" and remap["node_fault"] and remap["node"] == "node-c"
        assert remap["ranks"] == [1] and remap["message"].startswith("rank 1 (node-c, GPU 1 00000000:11:00.0):")
        action = finding(j, "gpu_recovery_action")
        assert action["node_fault"] and action["ranks"] == [2] and "node_reboot: reboot the node" in action["message"]
        xid = finding(j, "gpu_xid", ranks=[5])
        assert xid["severity"] == "down" and xid["node_fault"]
        assert xid["message"] == ("rank 5 (node-c, GPU 5 00000000:15:00.0): XID 79, the GPU fell off the bus "
                                  "\u2014 NVIDIA: reboot the node"), xid
        mine = finding(j, "gpu_xid", ranks=[6])
        assert mine["severity"] == "warning" and not mine["node_fault"], mine
        assert "usually the application's own fault" in mine["message"]
        flap = finding(j, "ib_link_downed")
        assert flap["node"] == "node-c" and flap["node_fault"] and flap["severity"] == "warning"
        assert "InfiniBand port mlx5_1/1 on node-c went down 3 times recently" in flap["message"], flap
        assert any(j["cause"].startswith(f["message"]) for f in j["findings"] if f["node_fault"]), j["cause"]
        # The job page's GPU table marks the troubled GPUs, and only those.
        page = server.get("/jobs/gpus")[1]
        rows = dict(re.findall(r'<tr data-gpu="(\d+)"[^>]*>(.*?)</tr>', page, re.S))
        assert 'class="error"' in rows["5"] and "XID 79" in rows["5"], rows["5"]
        assert 'class="error"' not in rows["0"], rows["0"]

        # The agent's /metrics with 8 GPUs and 2 ports: clean, and the GPU serving rank 5 says so.
        with urllib.request.urlopen(agent_base + "/metrics", timeout=10) as response:
            metrics = response.read().decode()
        assert promtool("check", "metrics", stdin=metrics) == (0, "")
        assert re.search(r'^trainwatch_gpu_memory_used_bytes\{gpu="5",uuid="[^"]+",training_job="gpus",rank="5"\} ',
                         metrics, re.M), metrics
        assert len(re.findall(r"^trainwatch_ib_port_up\{", metrics, re.M)) == 2
        assert len(re.findall(r"^trainwatch_gpu_row_remap_pending\{", metrics, re.M)) == 8
    finally:
        for p in ranks + [agent]:
            p.kill()
            p.wait()
