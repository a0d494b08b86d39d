#!/usr/bin/python3
"""Helper of test_probes.py, run inside a fresh network namespace (`unshare -n`): brings
up its loopback, sets its net.ipv4.ping_group_range, runs `trainwatch serve` with one icmp
monitor for 127.0.0.1 (without CAP_NET_RAW when asked), and prints the monitor's JSON once
it has a first result.

Usage: icmp_netns.py BINARY WORKDIR PING_GROUP_RANGE SOCKET DROP_NET_RAW(0|1)
"""
import json
import subprocess
import sys
import time
import urllib.request

binary, workdir, ping_range, socket_kind, drop_net_raw = sys.argv[1:6]
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
with open("/proc/sys/net/ipv4/ping_group_range", "w") as f:
    f.write(ping_range)
config = f"{workdir}/icmp.yaml"
with open(config, "w") as f:
    f.write(f"""monitors:
  - name: loopback
    type: icmp
    host: 127.0.0.1
    socket: {socket_kind}
    interval: 300ms
    timeout: 1s
""")
command = [binary, "serve", "-c", config, "--listen", "127.0.0.1:0", "--data-dir", f"{workdir}/data"]
if drop_net_raw == "1":
    command = ["setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw", "--"] + command
with open(f"{workdir}/serve.log", "ab") as log:
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log)
try:
    base = server.stdout.readline().decode().strip().split(" on ")[1].rstrip("/")
    deadline = time.monotonic() + 20
    monitor = None
    while time.monotonic() < deadline:
        monitor = json.loads(urllib.request.urlopen(f"{base}/api/v1/monitors/loopback", timeout=5).read())
        if monitor["status"] != "pending":
            break
        time.sleep(0.1)
    print(json.dumps(monitor))
finally:
    server.terminate()
    server.wait(20)
