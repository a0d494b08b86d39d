"""What the benches share: a free loopback port, a process's CPU time from /proc, the
load average, and a log line to stderr. Imported by each bench after it puts bench/ on
sys.path; it starts nothing."""
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

TCK = os.sysconf("SC_CLK_TCK")
ROOT = pathlib.Path(__file__).resolve().parents[1]


def binary_to_run(given, work):
    """The trainwatch binary a bench runs, and when it was built: `given`, else a copy of
    build/src/cli/trainwatch taken now into `work` (build/ may be rebuilt under a long run)."""
    binary = given
    if not binary:
        binary = str(pathlib.Path(work) / "trainwatch")
        shutil.copy2(ROOT / "build" / "src" / "cli" / "trainwatch", binary)
    built = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(os.stat(binary).st_mtime))
    return binary, built


def free_port():
    """A port free on 127.0.0.1 now (another process may take it before it is bound)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_s(pid):
    """User + system CPU seconds of a live process; 0.0 once it is gone."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TCK


def postgres_cpu_s(postmaster):
    """CPU of a PostgreSQL cluster: its postmaster and the live backends it forked."""
    total = 0.0
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat.parent.name) == postmaster or int(fields[1]) == postmaster:
            total += (int(fields[11]) + int(fields[12])) / TCK
    return total


def run_haproxy(config, log, port):
    """Starts Debian's HAProxy on the config file written at `config` (its output to `log`)
    and returns the process once http://127.0.0.1:`port`/healthz answers 200 through it,
    that is once a backend is up. Raises with HAProxy's log if it exits, or after 10 s."""
    proc = subprocess.Popen(["/usr/sbin/haproxy", "-db", "-f", str(config)], stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"haproxy exited: {pathlib.Path(log).read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return proc
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"haproxy: no answer from 127.0.0.1:{port}/healthz within 10 s")


def load_avg():
    return [round(x, 2) for x in os.getloadavg()]


def logger(name):
    """A log(msg) that prints "[name HH:MM:SS] msg" to stderr at once."""
    def log(msg):
        print(f"[{name} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
    return log
