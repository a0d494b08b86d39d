"""Job "grid": two nodes, node-a and node-b, each an agent pushing to the server every 0.5 s
and two paced ranks (paced_rank.py), ranks 0-1 on node-a and 2-3 on node-b."""
import os
import subprocess

from conftest import BINARY, ROOT


def start_grid_job(server, tmp_path, procs):
    """Starts the agents and ranks into `procs` (node name or rank -> process), so that the
    caller's `finally` stops whatever started even when a later start fails."""
    base_env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    base_env.update(PYTHONPATH=str(ROOT / os.environ.get("TRAINWATCH_BUILD", "build") / "python"),
                    TRAINWATCH_JOB="grid", WORLD_SIZE="4")
    for n, node in enumerate(("node-a", "node-b")):
        env = dict(base_env, TRAINWATCH_DIR=str(tmp_path / node), TRAINWATCH_NODE=node)
        procs[node] = subprocess.Popen([BINARY, "agent", "--job", "grid", "--listen", "127.0.0.1:0", "--dir",
                                        str(tmp_path / node), "--server", server.base, "--report-every", "0.5"],
                                       env=env, stderr=subprocess.DEVNULL)
        for local in range(2):
            rank = 2 * n + local
            procs[rank] = subprocess.Popen(["/usr/bin/python3", str(ROOT / "tests/integration/paced_rank.py")],
                                           env=dict(env, RANK=str(rank), LOCAL_RANK=str(local)),
                                           stdout=subprocess.PIPE)
            assert procs[rank].stdout.readline().strip() == b"ready"
