"""A bad `--listen` is one clear line and a non-zero exit, never an abort."""
import os
import signal
import subprocess

import pytest

from conftest import BINARY

AGENT = os.path.join(os.path.dirname(BINARY), "trainwatch-agent")


@pytest.mark.parametrize("listen", ["127.0.0.1:abc", "127.0.0.1:", "127.0.0.1:70000", "8080", ":8080",
                                    "127.0.0.1:99999999999999999999"])
def test_serve_refuses_a_bad_listen_address_with_one_line(tmp_path, listen):
    config = tmp_path / "trainwatch.yaml"
    config.write_text("monitors: []\n")
    done = subprocess.run([BINARY, "serve", "-c", str(config), "--listen", listen, "--data-dir", str(tmp_path / "d")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode > 0, (done.returncode, done.stderr)  # negative: killed by a signal (abort)
    assert done.returncode != 128 + signal.SIGABRT
    errors = [line for line in done.stderr.splitlines() if "--listen" in line]
    assert len(errors) == 1, done.stderr
    assert f"'{listen}'" in errors[0] and "expected HOST:PORT" in errors[0], errors[0]


@pytest.mark.skipif(not os.path.exists(AGENT), reason="built without the agent")
def test_agent_refuses_a_bad_listen_address_with_one_line():
    done = subprocess.run([AGENT, "--job", "j", "--listen", "127.0.0.1:abc"], capture_output=True, text=True, timeout=30)
    assert done.returncode > 0, (done.returncode, done.stderr)
    assert "'127.0.0.1:abc'" in done.stderr and "expected HOST:PORT" in done.stderr, done.stderr
