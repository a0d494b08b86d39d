"""Every fenced block of docs/*.md marked runnable runs as written:
- ```yaml runnable: a whole config file, which `trainwatch check` accepts (its ${ENV}
  references set to placeholders);
- ```sh runnable: a shell snippet, run by bash against a real server on examples/demo.yaml
  plus the heartbeat the docs ping and jobs.auto_create (the quick start's torchrun job),
  with http://127.0.0.1:8080 pointed at that server's port (the only change), `trainwatch`
  on PATH, the built `trainwatch` Python module on PYTHONPATH (where `pip install ./python`
  would put it) and a stand-in train.py that fails with exit code 3. It must exit 0, and a
  block that pings must have delivered what it says;
- ```haproxy runnable: a whole HAProxy configuration, which `haproxy -c` accepts without
  a warning."""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import BINARY, ROOT

DOC_TOKEN = "6f1c0c1e-2c8b-4d6f-9f5a-3f0b9b7d2a11"  # the heartbeat token docs/api.md pings
FENCE = re.compile(r"^```(\w+) runnable\n(.*?)^```$", re.M | re.S)


def runnable_blocks(language):
    found = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        text = doc.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start()) + 1
                found.append(pytest.param(match.group(2), id=f"{doc.name}:{line}"))
    return found


def test_the_docs_mark_blocks_runnable():
    assert len(runnable_blocks("sh")) >= 5 and runnable_blocks("yaml") and runnable_blocks("haproxy")


@pytest.mark.parametrize("block", runnable_blocks("yaml"))
def test_a_runnable_config_is_valid(block, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(block)
    env = dict(os.environ)
    for name in set(re.findall(r"\$\{(\w+)\}", block)):
        env[name] = "https://hooks.example.com/placeholder" if name.endswith("URL") else "placeholder"
    p = subprocess.run([BINARY, "check", str(config)], env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("block", runnable_blocks("sh"))
def test_a_runnable_shell_block_runs(block, start_server, tmp_path):
    heartbeat = f"monitors:\n  - name: docs-train\n    type: heartbeat\n    period: 1h\n    token: {DOC_TOKEN}\n"
    config = (ROOT / "examples" / "demo.yaml").read_text().replace("monitors:\n", heartbeat, 1)
    config += "jobs:\n  auto_create: true\n"
    server = start_server(config)
    (tmp_path / "train.py").write_text("import sys\nprint('step 10 loss 2.5')\nsys.exit(3)\n")
    env = {**os.environ, "TOKEN": DOC_TOKEN, "PATH": f"{pathlib.Path(BINARY).parent}:{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT / os.environ.get("TRAINWATCH_BUILD", "build") / "python")}
    script = block.replace("http://127.0.0.1:8080", server.base)
    p = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    if f"/ping/$TOKEN/" in block:
        status, body, _ = server.get("/api/v1/monitors/docs-train/pings?limit=1")
        assert status == 200 and body["pings"][0]["exit_code"] == 3, body


@pytest.mark.parametrize("block", runnable_blocks("haproxy"))
def test_a_runnable_haproxy_config_is_valid(block, tmp_path):
    config = tmp_path / "haproxy.cfg"
    config.write_text(block)
    p = subprocess.run(["haproxy", "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "WARNING" not in p.stdout + p.stderr, p.stdout + p.stderr
