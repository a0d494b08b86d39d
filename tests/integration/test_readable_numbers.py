"""Numbers in the JSON people read: plain shortest decimals, never Boost's 4.2E0 form.

Reads the raw body text of the API and of the agent's /health, as `curl` shows it."""
import json
import re
import subprocess
import urllib.error
import urllib.request

from conftest import BINARY, wait_for

STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
EXPONENT = re.compile(r"\d[eE][+-]?\d")


def raw(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def numbers_after(key, text):
    return re.findall(rf'"{key}":(-?[0-9][0-9.eE+-]*)', text)


def assert_plain(text):
    outside_strings = STRINGS.sub('""', text)
    assert not EXPONENT.search(outside_strings), text
    json.loads(text)


def assert_shortest_plain(number_text):
    value = float(number_text)
    # Python's repr is the shortest text that reads back to the same double; in this range
    # it is plain decimal too.
    assert 1e-4 <= abs(value) < 1e16, number_text
    assert number_text == repr(value), number_text


def test_api_writes_a_fractional_latency_as_a_plain_shortest_decimal(start_server, health_target):
    server = start_server(f"""
monitors:
  - name: rank0-health
    type: http
    url: http://127.0.0.1:{health_target.port}/health
    interval: 200ms
""")

    def fractional_latency():
        text = raw(server.base + "/api/v1/monitors/rank0-health")
        found = numbers_after("last_latency_ms", text)
        return found and float(found[0]) != int(float(found[0])) and (text, found[0])

    text, latency = wait_for(fractional_latency, what="a check with a fractional latency")
    assert_shortest_plain(latency)
    assert_plain(text)
    assert_plain(raw(server.base + "/api/v1/monitors"))


def test_agent_health_writes_fractional_gigabytes_as_plain_shortest_decimals(tmp_path):
    agent = subprocess.Popen([BINARY, "agent", "--job", "numbers", "--listen", "127.0.0.1:0",
                              "--dir", str(tmp_path / "slots")],
                             stderr=subprocess.PIPE)
    try:
        lines = []
        for _ in range(20):  # a note or two (the descriptor limit) may come before the address
            lines.append(agent.stderr.readline().decode())
            match = re.search(r"on (http://[0-9.]+:\d+/health)", lines[-1])
            if match or not lines[-1]:
                break
        assert match, lines
        url = match.group(1)

        def body():
            try:
                return raw(url)
            except urllib.error.HTTPError as error:  # 503 while degraded: same JSON
                return error.read().decode()

        text = wait_for(lambda: (t := body()) and numbers_after("free_gb", t) and t, what="/health with memory")
        for number in numbers_after("free_gb", text) + numbers_after("total_gb", text):
            if float(number) != int(float(number)):
                assert_shortest_plain(number)
        assert_plain(text)
    finally:
        agent.terminate()
        agent.wait(timeout=10)
