"""pip installs the trainwatch package into a fresh virtual environment, and the installed
module reports from any directory with no PYTHONPATH, no LD_LIBRARY_PATH and no build folder
on its path: a step it reports is read back by the real `trainwatch agent`.

pip builds through python/setup.py; TRAINWATCH_CMAKE_BUILD_DIR points it at the build folder
the other tests use (already built), so the install takes seconds rather than a cold build."""
import json
import os
import subprocess
import textwrap

from conftest import BUILD, ROOT, agent_health, free_port
from test_trainwatch import wait_for

PY = "/usr/bin/python3"
BIN = os.environ.get("TRAINWATCH_BIN", os.path.join(BUILD, "src", "cli", "trainwatch"))


def clean_env(**extra):
    """The user's environment, minus anything that would find the package without pip."""
    drop = ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME", "RANK", "LOCAL_RANK", "WORLD_SIZE", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not k.startswith(("TORCHELASTIC_", "SLURM_", "TRAINWATCH_"))}
    env.update(extra)
    return env


def test_pip_installed_module_reports_from_any_directory(tmp_path):
    venv = tmp_path / "venv"
    # Without its own pip (seeding one costs a minute here): Debian's pip, seen through the
    # system site-packages, installs into the environment it runs in.
    subprocess.run([PY, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-cache-dir",
         "--disable-pip-version-check", "-q", os.path.join(ROOT, "python")],
        env=clean_env(TRAINWATCH_CMAKE_BUILD_DIR=BUILD), capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    slots = tmp_path / "slots"
    code = """
        import json, trainwatch, trainwatch._native as native
        tw = trainwatch.init(job="pip-check", rank=0, world_size=1)
        tw.step(41, loss=0.25)
        print(json.dumps({"package": trainwatch.__file__, "native": native.__file__, "enabled": tw.enabled}))
    """
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-c", textwrap.dedent(code)], cwd=elsewhere,
        env=clean_env(TRAINWATCH_DIR=str(slots), TORCHELASTIC_RUN_ID="pip-run-1", TORCHELASTIC_RESTART_COUNT="1",
                      GROUP_RANK="0"),
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["enabled"] is True, run.stderr
    for path in (seen["package"], seen["native"]):
        assert path.startswith(str(venv)), f"{path} is not the installed copy"

    port = free_port()
    agent = subprocess.Popen([BIN, "agent", "--job", "pip-check", "--dir", str(slots), "--listen", f"127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        h = wait_for(lambda: (lambda b: b if b and b["ranks"] else None)(agent_health(port)))
    finally:
        agent.terminate()
        agent.wait(10)
    rank = h["ranks"][0]
    assert rank["step"] == 41 and rank["loss"] == 0.25
    assert rank["status"] == "finished"
    assert rank["attempt"] == 1 and rank["run_id"] == "pip-run-1" and rank["node_rank"] == 0
