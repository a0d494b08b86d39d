"""dns and icmp monitors end to end: the real binary against a real dnsmasq on loopback,
misbehaving UDP peers, and ICMP echo to 127.0.0.1 (raw and unprivileged datagram sockets)."""
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from conftest import BINARY, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
# Two TXT records of three 200-byte strings each: over 512 bytes, so the UDP answer is truncated.
BIG_X, BIG_Y = "x" * 200, "y" * 200


def dns_query(name, qtype=1, qid=0x1234):
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack(">HH", qtype, 1)


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dnsmasq(tmp_path):
    """dnsmasq on a free loopback port with A, AAAA, CNAME, MX and TXT records of its own."""
    for _ in range(3):  # the port may be taken between choosing and binding it
        port = free_udp_port()
        log = open(tmp_path / "dnsmasq.log", "wb")
        proc = subprocess.Popen(
            ["dnsmasq", "--no-daemon", "-C", "/dev/null", "--pid-file=", f"--port={port}",
             "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts", "--local=/test/",
             "--address=/web.test/10.0.0.5", "--host-record=api.test,10.0.0.7,2001:db8::7",
             "--cname=alias.test,api.test", "--mx-host=mail.test,mx1.test,10",
             "--txt-record=txt.test,v=spf1 -all",
             f"--txt-record=big.test,{BIG_X},{BIG_X},{BIG_X}", f"--txt-record=big.test,{BIG_Y},{BIG_Y},{BIG_Y}"],
            stdout=log, stderr=log)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.settimeout(0.2)
            deadline = time.monotonic() + 10
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    probe.sendto(dns_query("web.test"), ("127.0.0.1", port))
                    probe.recv(512)
                    break
                except OSError:
                    continue
        if proc.poll() is None:
            yield port
            proc.terminate()
            proc.wait(10)
            return
    pytest.fail("dnsmasq did not start: " + (tmp_path / "dnsmasq.log").read_text())


class UdpPeer:
    """A UDP port that answers DNS queries badly: 'silent' never answers, 'garbage' sends
    nine bytes that are not DNS, 'wrong-id' answers well-formed with another id."""

    def __init__(self, mode):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.mode = mode
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                query, peer = self.sock.recvfrom(512)
            except OSError:
                return
            if self.mode == "garbage":
                self.sock.sendto(b"\x00\x01not dns", peer)
            elif self.mode == "wrong-id":
                qid = struct.unpack(">H", query[:2])[0] ^ 0xFFFF
                self.sock.sendto(struct.pack(">HH", qid, 0x8180) + query[4:], peer)

    def close(self):
        self.sock.close()


@pytest.fixture
def udp_peer():
    peers = []

    def make(mode):
        peers.append(UdpPeer(mode))
        return peers[-1]

    yield make
    for peer in peers:
        peer.close()


def dns_monitor(name, query, record, resolver_port, *conditions):
    lines = [f"  - name: {name}", "    type: dns", f"    query: {query}", f"    record: {record}",
             f"    resolver: 127.0.0.1:{resolver_port}", "    interval: 300ms", "    timeout: 1s"]
    if conditions:
        lines.append("    conditions:")
        lines += [f"      - '{c}'" for c in conditions]
    return "\n".join(lines) + "\n"


def test_dns_monitors_against_dnsmasq_and_bad_resolvers(start_server, dnsmasq, udp_peer, closed_port):
    silent, garbage, wrong_id = udp_peer("silent"), udp_peer("garbage"), udp_peer("wrong-id")
    config = "monitors:\n" + "".join([
        dns_monitor("web-a", "web.test", "A", dnsmasq, "[DNS_RCODE] == NOERROR", "[BODY] == 10.0.0.5",
                    "[RESPONSE_TIME] < 1000"),
        dns_monitor("api-aaaa", "api.test", "AAAA", dnsmasq, "[BODY] == 2001:db8::7"),
        dns_monitor("alias-cname", "alias.test", "CNAME", dnsmasq, "[BODY] == api.test"),
        dns_monitor("mail-mx", "mail.test", "MX", dnsmasq, '[BODY] == "10 mx1.test"'),
        dns_monitor("spf-txt", "txt.test", "TXT", dnsmasq, '[BODY] == "v=spf1 -all"'),
        dns_monitor("big-txt", "big.test", "TXT", dnsmasq, f"[BODY] == {BIG_X * 3},{BIG_Y * 3}"),
        dns_monitor("missing", "nope.test", "A", dnsmasq),
        dns_monitor("expected-missing", "nope.test", "A", dnsmasq, "[DNS_RCODE] == NXDOMAIN"),
        dns_monitor("moved", "web.test", "A", dnsmasq, "[BODY] == 10.0.0.6"),
        dns_monitor("silent", "web.test", "A", silent.port),
        dns_monitor("garbage", "web.test", "A", garbage.port),
        dns_monitor("wrong-id", "web.test", "A", wrong_id.port),
        dns_monitor("refused", "web.test", "A", closed_port),
    ])
    server = start_server(config)
    for name in ("web-a", "api-aaaa", "alias-cname", "mail-mx", "spf-txt", "big-txt", "expected-missing"):
        up = server.wait_status(name, "up")
        assert up["last_error"] is None, name
    assert server.monitor("web-a")["target"] == f"web.test A @127.0.0.1:{dnsmasq}"

    def cause(name):
        return server.wait_status(name, "down")["last_error"]

    assert cause("missing") == "[DNS_RCODE] == NXDOMAIN, expected NOERROR"
    assert cause("moved") == "[BODY] == 10.0.0.5, expected 10.0.0.6"
    assert cause("silent") == f"no answer from 127.0.0.1:{silent.port} within 1s"
    assert cause("garbage") == f"malformed answer from 127.0.0.1:{garbage.port}: ends inside the header (9 of 12 bytes)"
    assert re.fullmatch(rf"answer from 127\.0\.0\.1:{wrong_id.port} has id \d+, not the query's \d+", cause("wrong-id"))
    assert cause("refused") == f"connection refused by 127.0.0.1:{closed_port} (nothing listens on that UDP port)"
    assert server.proc.poll() is None


def test_icmp_monitors_ping_loopback_and_name_a_host_that_does_not_resolve(start_server):
    server = start_server("""
monitors:
  - name: loopback
    type: icmp
    host: 127.0.0.1
    count: 3
    interval: 300ms
    timeout: 1s
    conditions:
      - "[PACKET_LOSS] == 0"
      - "[RESPONSE_TIME] < 500"
  - name: nowhere
    type: icmp
    host: nope.invalid
    interval: 300ms
    timeout: 1s
""")
    up = server.wait_status("loopback", "up")
    assert up["target"] == "127.0.0.1"
    assert up["last_latency_ms"] < 500
    down = server.wait_status("nowhere", "down")
    assert down["last_error"].startswith("cannot resolve nope.invalid: "), down["last_error"]


def run_in_own_network_namespace(tmp_path, ping_range, socket_kind, drop_net_raw):
    """Runs tests/integration/icmp_netns.py under `unshare -n`: its own loopback and its
    own net.ipv4.ping_group_range, so the host's setting is neither needed nor changed."""
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here (needs root or user namespaces)")
    out = subprocess.run(["unshare", "-n", sys.executable, os.path.join(HERE, "icmp_netns.py"), BINARY,
                          str(tmp_path), ping_range, socket_kind, "1" if drop_net_raw else "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_icmp_through_an_unprivileged_datagram_socket(tmp_path):
    gid = os.getgid()
    monitor = run_in_own_network_namespace(tmp_path, f"{gid} {gid}", "datagram", drop_net_raw=True)
    assert monitor["status"] == "up", monitor
    assert monitor["last_error"] is None


def test_icmp_says_what_to_change_when_no_socket_is_permitted(tmp_path):
    monitor = run_in_own_network_namespace(tmp_path, "1 0", "auto", drop_net_raw=True)
    assert monitor["status"] == "down", monitor
    assert monitor["last_error"] == "ICMP not permitted: set net.ipv4.ping_group_range or grant CAP_NET_RAW"


def test_bad_probe_config_is_refused_with_its_place(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("monitors:\n  - name: a\n    type: dns\n    query: " + "x" * 64 + ".test\n"
                      "  - name: b\n    type: icmp\n    host: 127.0.0.1\n    count: 1000\n")
    result = subprocess.run([BINARY, "check", str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert f"{config}:4:12: monitors[0].query: found '{'x' * 64}.test'; expected labels of at most 63 characters; " \
           "label 1 has 64" in result.stderr
    assert f"{config}:8:12: monitors[1].count: " in result.stderr
