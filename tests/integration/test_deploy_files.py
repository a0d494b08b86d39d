"""What can be checked of the container recipe and the Kubernetes manifests without a
container runtime or a cluster (neither exists where the tests run): the YAML parses, the
server's config in the ConfigMap passes `trainwatch check`, the probes ask /healthz on the
port the server listens on, every variable the agent's DaemonSet sets is one the agent
reads, and the image's entrypoint is a path the Debian package installs."""
import os
import pathlib
import re
import subprocess

import yaml

from conftest import BINARY, ROOT

DEPLOY = ROOT / "deploy"


def documents(name):
    return {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "kubernetes" / name).read_text())}


def packaged_paths():
    """/usr/bin/... as debian/*.install lists what each package ships."""
    return {"/" + line.strip() for f in (ROOT / "debian").glob("*.install") for line in f.read_text().splitlines()}


def test_the_server_manifest_runs_the_config_it_ships(tmp_path):
    server = documents("server.yaml")
    config = tmp_path / "trainwatch.yaml"
    config.write_text(server["ConfigMap"]["data"]["trainwatch.yaml"])
    env = {**os.environ, "TRAINWATCH_STORE_URL": "postgresql://trainwatch@db:5432/trainwatch",
           "TRAINWATCH_TOKEN": "jobs-token"}
    p = subprocess.run([BINARY, "check", str(config)], env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    listen_port = int(yaml.safe_load(config.read_text())["server"]["listen"].rsplit(":", 1)[1])

    pod = server["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": listen_port}
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
    secrets = {e["name"] for e in container["env"] if "secretKeyRef" in e.get("valueFrom", {})}
    assert "TRAINWATCH_STORE_URL" in secrets, "store.url comes from a Secret"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/etc/trainwatch", "/var/lib/trainwatch"} <= mounts
    assert server["Service"]["spec"]["selector"] == server["Deployment"]["spec"]["selector"]["matchLabels"]


def test_every_variable_the_daemonset_sets_is_read_by_the_agent():
    daemonset = documents("agent-daemonset.yaml")["DaemonSet"]
    pod = daemonset["spec"]["template"]["spec"]
    container = pod["containers"][0]
    read = set()
    for source in list((ROOT / "src").rglob("*.cc")) + list((ROOT / "src").rglob("*.h")):
        read |= set(re.findall(r'"(TRAINWATCH_[A-Z_]+)"', source.read_text()))
    assert {e["name"] for e in container["env"]} - read == set()
    assert container["command"][0] in packaged_paths()
    assert pod["hostPID"] is True, "the ranks' processes are the host's"
    shm = next(v for v in pod["volumes"] if v["name"] == "shm")
    assert shm["hostPath"]["path"] == "/dev/shm"
    assert {"name": "shm", "mountPath": "/dev/shm"} in container["volumeMounts"]


def test_the_image_entrypoint_is_the_packaged_server():
    dockerfile = (DEPLOY / "docker" / "Dockerfile").read_text()
    entrypoint = yaml.safe_load(re.search(r"^ENTRYPOINT (.*)$", dockerfile, re.M).group(1))
    assert entrypoint[0] in packaged_paths() and entrypoint[1] == "serve"
    config = yaml.safe_load(re.search(r"^CMD (.*)$", dockerfile, re.M).group(1))
    assert config[config.index("--config") + 1] == "/etc/trainwatch/trainwatch.yaml"
    assert "/etc/trainwatch/trainwatch.yaml" in packaged_paths()
    assert re.search(r"^FROM debian:12", dockerfile, re.M)
