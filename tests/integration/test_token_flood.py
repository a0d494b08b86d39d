"""A flood of wrong admin tokens from many source addresses must not lock the admins out.

The flood: 50,000 wrong bearer tokens from 10,000 loopback addresses (127.1.x.y, five
each, over one keep-alive connection per address), sent by 16 threads. Meanwhile 100
requests carry the right token: half from addresses inside the flood set, half from
addresses it never used. Every one must succeed: a source is only ever held back by its
own wrong tokens (auth/guess_throttle.h), and each flooding address stays within its
allowance of 10. (One that used up its allowance waits even with the right token:
test_write_access.py holds that.)"""
import http.client
import re
import threading
import time
import urllib.parse

from conftest import wait_for

TOKEN = "flood-test-admin-token-0123456789"
FLOOD_ADDRESSES = [f"127.1.{i // 250}.{i % 250 + 1}" for i in range(10_000)]
PER_ADDRESS = 5
THREADS = 16
FLOOD_DEADLINE_S = 240


def connection(server, source):
    url = urllib.parse.urlsplit(server.base)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30, source_address=(source, 0))


def post(conn, path, token):
    conn.request("POST", path, body=b"", headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    response.read()
    return response.status


def flood(server, addresses, statuses, errors):
    for index, source in enumerate(addresses):
        conn = connection(server, source)
        try:
            for n in range(PER_ADDRESS):
                statuses.append(post(conn, "/api/v1/monitors/nightly/pause", f"wrong-{source}-{n}-{index}"))
        except OSError as error:
            errors.append(f"{source}: {error}")
        finally:
            conn.close()


def metric(text, name, kind):
    match = re.search(rf'^{name}{{kind="{kind}"}} (\d+)', text, re.MULTILINE)
    return int(match.group(1)) if match else None


def test_a_flood_of_wrong_tokens_from_many_addresses_never_refuses_the_right_one(start_server):
    server = start_server(f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: nightly-ping-token-0123}}
auth:
  admin_tokens: ["{TOKEN}"]
""")
    statuses, errors = [], []
    chunks = [FLOOD_ADDRESSES[i::THREADS] for i in range(THREADS)]
    threads = [threading.Thread(target=flood, args=(server, chunk, statuses, errors)) for chunk in chunks]
    started = time.monotonic()
    for t in threads:
        t.start()

    # The right token, while the flood runs: from flooding addresses and from fresh ones.
    right = []
    inside = FLOOD_ADDRESSES[::200]                       # 50 addresses of the flood set
    outside = [f"127.2.0.{i + 1}" for i in range(50)]     # 50 it never uses
    total = len(FLOOD_ADDRESSES) * PER_ADDRESS
    for k, source in enumerate(source for pair in zip(inside, outside) for source in pair):
        # The k-th once the flood is k% through: spread over the whole flood.
        wait_for(lambda: len(statuses) >= k * total // 100 or not any(t.is_alive() for t in threads),
                 timeout=FLOOD_DEADLINE_S, interval=0.01, what="the flood to move on")
        conn = connection(server, source)
        try:
            right.append((source, post(conn, "/api/v1/monitors/nightly/pause", TOKEN)))
        finally:
            conn.close()
    for t in threads:
        t.join(timeout=max(1, FLOOD_DEADLINE_S - (time.monotonic() - started)))
    assert not any(t.is_alive() for t in threads), f"the flood did not finish in {FLOOD_DEADLINE_S} s"
    elapsed = time.monotonic() - started

    assert len(right) == 100
    refused = [(source, status) for source, status in right if status != 200]
    assert not refused, f"the right token was refused: {refused}"
    assert not errors, errors[:5]
    assert len(statuses) == len(FLOOD_ADDRESSES) * PER_ADDRESS
    unexpected = {s for s in statuses if s not in (401, 429)}
    assert not unexpected, f"the flood got answers other than 401/429: {unexpected}"
    wrong, throttled = statuses.count(401), statuses.count(429)
    assert wrong >= 0.9 * len(statuses), (wrong, throttled)

    def counted():
        text = server.get("/metrics")[1]
        return (metric(text, "trainwatch_auth_failures_total", "bearer"),
                metric(text, "trainwatch_auth_throttled_total", "bearer"))
    assert counted() == (wrong, throttled)
    text = server.get("/metrics")[1]
    # Every flooding address is remembered; none was forgotten early (the bound is 65,536).
    sources = re.search(r'^trainwatch_auth_throttle_entries{table="source"} (\d+)', text, re.MULTILINE)
    assert sources and int(sources.group(1)) >= len(FLOOD_ADDRESSES), text[-2000:]
    assert re.search(r'^trainwatch_auth_throttle_forgotten_total{table="source"} 0$', text, re.MULTILINE)
    # Logged, but rate-limited: a line every 10 s at most, not one per wrong token.
    lines = [line for line in server.log_path.read_text().splitlines() if "wrong or throttled credential" in line]
    assert 1 <= len(lines) <= elapsed / 10 + 2, (len(lines), elapsed)
    print(f"flood: {len(statuses)} answers in {elapsed:.1f} s ({wrong} 401, {throttled} 429)")
    wait_for(lambda: server.monitor("nightly")["status"] == "paused", what="the admin's pause")
