"""The Debian package as an operator meets it, on the machine the tests run on (as root):
scripts/package builds it with dpkg-buildpackage; `dpkg -i` installs it and creates the
service user; the unit's own ExecStart, run as that user on the shipped default config,
answers /healthz; `dpkg -r` keeps /var/lib/trainwatch and the config, `dpkg -P` deletes
them. Whatever happens, the machine is left as it was: the packages purged, and the user
and /var/lib/trainwatch removed when the test created them."""
import os
import pathlib
import pwd
import shlex
import shutil
import signal
import subprocess
import urllib.request

import pytest

from conftest import ROOT, wait_for

OUT = ROOT / "build-deb"
PACKAGES = ["trainwatch", "libtrainwatch1", "libtrainwatch-dev"]
UNIT = pathlib.Path("/lib/systemd/system/trainwatch.service")
STATE = pathlib.Path("/var/lib/trainwatch")
MAX_BINARY_BYTES = 25 * 1024 * 1024

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root")


def sh(*command, check=True, timeout=120):
    p = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, f"{shlex.join(command)}: {p.stdout}{p.stderr}"
    return p


def installed(package):
    p = sh("dpkg-query", "-W", "-f=${Status}", package, check=False)
    return p.returncode == 0 and "installed" in p.stdout and "not-installed" not in p.stdout


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module")
def debs():
    """The freshly built packages: {name: path}."""
    p = subprocess.run(["bash", str(ROOT / "scripts/package"), str(OUT)], capture_output=True, text=True,
                       timeout=3600)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    found = {deb.name.split("_")[0]: deb for deb in OUT.glob("*.deb")}
    return found


@pytest.fixture
def machine():
    """Installs nothing itself; restores the machine whatever the test did."""
    clashing = [p for p in PACKAGES if installed(p)]
    if clashing:
        pytest.fail(f"{clashing} already installed here: the test installs and purges its own")
    had_user, had_state = user_exists("trainwatch"), STATE.exists()
    yield
    sh("dpkg", "--purge", *PACKAGES, check=False)
    if not had_user and user_exists("trainwatch"):
        sh("deluser", "--system", "trainwatch", check=False)
        sh("delgroup", "--system", "trainwatch", check=False)
    if not had_state:
        shutil.rmtree(STATE, ignore_errors=True)


def test_binaries_are_stripped_small_and_their_debug_info_is_packaged(debs, tmp_path):
    assert {"trainwatch", "trainwatch-dbgsym", "libtrainwatch1", "libtrainwatch-dev"} <= debs.keys(), debs
    sh("dpkg-deb", "-x", str(debs["trainwatch"]), str(tmp_path / "pkg"))
    for program in ("trainwatch", "trainwatch-agent"):
        binary = tmp_path / "pkg/usr/bin" / program
        sections = sh("readelf", "-S", "-W", str(binary)).stdout
        assert ".debug_info" not in sections and ".symtab" not in sections, f"{program} is not stripped"
        assert binary.stat().st_size <= MAX_BINARY_BYTES, f"{program}: {binary.stat().st_size} bytes"
    debug = sh("dpkg-deb", "-c", str(debs["trainwatch-dbgsym"])).stdout
    assert debug.count("/usr/lib/debug/.build-id/") >= 2, debug
    assert sh("dpkg-deb", "-f", str(debs["trainwatch"]), "Depends").stdout.count("adduser") == 1
    # What the README and the shipped config point to: the rules, the dashboard, the docs.
    contents = sh("dpkg-deb", "-c", str(debs["trainwatch"])).stdout
    for path in ("./usr/share/trainwatch/prometheus/trainwatch.rules.yml",
                 "./usr/share/trainwatch/grafana/trainwatch.json", "./usr/share/doc/trainwatch/docs/quickstart.md",
                 "./usr/share/doc/trainwatch/docs/screenshot-dashboard.png"):
        assert path in contents, f"{path} is not in the package"
    conffiles = sh("dpkg-deb", "-I", str(debs["trainwatch"]), "conffiles").stdout.split()
    assert "/etc/trainwatch/trainwatch.yaml" in conffiles


def test_lintian_finds_no_error(debs):
    findings = (OUT / "lintian.txt").read_text()
    assert not [line for line in findings.splitlines() if line.startswith("E: ")], findings


def test_install_run_the_unit_remove_and_purge(debs, machine, tmp_path):
    sh("dpkg", "-i", *(str(debs[p]) for p in PACKAGES))
    user = pwd.getpwnam("trainwatch")
    assert user.pw_uid < 1000 and user.pw_shell.endswith("nologin")
    assert STATE.stat().st_uid == user.pw_uid
    checked = sh("trainwatch", "check")  # no file named: the installed default
    assert checked.stdout.strip() == "/etc/trainwatch/trainwatch.yaml: ok, 1 monitors"
    # The installed units as systemd reads them; the template as one instance of it.
    agent = tmp_path / "trainwatch-agent@llama-7b.service"
    agent.write_text(pathlib.Path("/lib/systemd/system/trainwatch-agent@.service").read_text())
    verified = sh("systemd-analyze", "verify", str(UNIT), str(agent), check=False)
    assert (verified.returncode, verified.stdout + verified.stderr) == (0, "")

    # The unit's command line as systemd would run it: its user, its working directory. Port 0
    # over the config's 8080 only, which another server on this machine may hold.
    exec_start = next(line.split("=", 1)[1] for line in UNIT.read_text().splitlines()
                      if line.startswith("ExecStart="))
    assert exec_start == "/usr/bin/trainwatch serve --config /etc/trainwatch/trainwatch.yaml"
    log = open(tmp_path / "server.log", "wb")
    server = subprocess.Popen(["runuser", "-u", "trainwatch", "--", *shlex.split(exec_start),
                               "--listen", "127.0.0.1:0"], cwd=STATE, stdout=subprocess.PIPE, stderr=log)
    try:
        line = server.stdout.readline().decode()
        assert "serving" in line, (line, (tmp_path / "server.log").read_text())
        base = line.strip().split(" on ")[1].rstrip("/")
        with urllib.request.urlopen(base + "/healthz", timeout=10) as response:
            assert response.status == 200
        wait_for(lambda: any(STATE.iterdir()), what="the store in /var/lib/trainwatch")
        assert all(path.stat().st_uid == user.pw_uid for path in STATE.iterdir())
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        log.close()

    sh("dpkg", "-r", "trainwatch")
    assert not pathlib.Path("/usr/bin/trainwatch").exists()
    assert any(STATE.iterdir()), "dpkg -r deleted the state"
    assert pathlib.Path("/etc/trainwatch/trainwatch.yaml").exists(), "dpkg -r deleted the conffile"
    sh("dpkg", "-P", "trainwatch")
    assert not STATE.exists() and not pathlib.Path("/etc/trainwatch/trainwatch.yaml").exists()
