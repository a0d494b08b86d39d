"""pytest set-up: import the trainwatch package built by CMake.

Run:  TRAINWATCH_BUILD=build-agent /usr/bin/python3 -m pytest tests/python
(TRAINWATCH_BUILD defaults to build-agent; the package is in <build>/python.)
"""
import json
import os
import socket
import sys
import urllib.error
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("TRAINWATCH_BUILD", "build-agent"))
PKG = os.path.join(BUILD, "python")
sys.path.insert(0, PKG)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agent_health(port):
    """The /health body of an agent on 127.0.0.1:port, or None while it does not answer yet."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())
    except (urllib.error.URLError, OSError):
        return None


@pytest.fixture
def env(tmp_path):
    """Environment for a child training process: the package on its path, a private slot dir."""
    e = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    e["PYTHONPATH"] = PKG
    e["TRAINWATCH_DIR"] = str(tmp_path / "slots")
    e["TRAINWATCH_JOB"] = "pytest"
    return e
