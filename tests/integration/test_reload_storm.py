"""100 SIGHUPs while pings and API reads keep coming: the server never falls over, every
ping it answered 200 is stored, no request fails, and the last config is the one in force.

A reload may legitimately refuse a ping to a monitor it removes (404), a token it removes
(401), or keep the old config when it reads a half-written file ("reload ... refused").
The storm is built so that none of these can happen to what it measures: the pinged
monitors and the constant admin token are in every config, and each config is written
whole (rename) before its signal. So every answer must be 200, with no exceptions.
"""
import os
import threading
import urllib.error
import urllib.request

from conftest import api_call, wait_for

RELOADS = 100
PINGS_PER_THREAD = 800   # under the per-URL burst (1000): the rate limit never answers
READS_PER_THREAD = 2000
STEADY = "steady-admin-token-0123456789"
PING_TOKENS = ["storm-ping-token-one", "storm-ping-token-two"]


def admin_token(i):
    return f"rotating-admin-token-{i % 3}-0123456789"


def report_token(i):
    return f"rotating-report-token-{i % 3}"


def config(i):
    """Config number i: the `extra` monitor comes and goes with each reload, the rotating
    admin and report tokens cycle through three values (so the last config's, number
    100, is not the first's); everything the load touches is the same in all."""
    extra = "  - {name: extra, type: heartbeat, period: 1h}\n" if i % 2 else ""
    return f"""
monitors:
  - {{name: beat-one, type: heartbeat, period: 1h, token: {PING_TOKENS[0]}}}
  - {{name: beat-two, type: heartbeat, period: 1h, token: {PING_TOKENS[1]}}}
  - {{name: paused, type: heartbeat, period: 1h}}
{extra}auth:
  admin_tokens: ["{STEADY}", "{admin_token(i)}"]
jobs:
  token: {report_token(i)}
"""


def write_whole(path, text):
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def status_of(url, method="GET"):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:  # a refused or reset connection is a failure too
        return repr(error)


def test_reload_storm_under_load(start_server):
    server = start_server(config(0))
    stop = threading.Event()
    results = {"pings": [[], []], "reads": [[], []], "writes": []}

    def pinger(k):
        for _ in range(PINGS_PER_THREAD):
            if stop.is_set():
                return
            results["pings"][k].append(status_of(f"{server.base}/ping/{PING_TOKENS[k]}"))

    def reader(k):
        paths = ["/api/v1/monitors", "/api/v1/monitors/beat-one", "/healthz", "/metrics"]
        for n in range(READS_PER_THREAD):
            if stop.is_set():
                return
            results["reads"][k].append(status_of(server.base + paths[n % len(paths)]))

    def writer():
        # Writes with a token every config holds: a reload must not refuse them.
        for n in range(200):
            if stop.is_set():
                return
            action = "pause" if n % 2 == 0 else "resume"
            results["writes"].append(api_call(server, "POST", f"/api/v1/monitors/paused/{action}", token=STEADY)[0])

    threads = [threading.Thread(target=pinger, args=(k,)) for k in range(2)]
    threads += [threading.Thread(target=reader, args=(k,)) for k in range(2)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    try:
        for i in range(1, RELOADS + 1):
            write_whole(server.config_path, config(i))
            server.reload()
            # Each signal is seen before the next is sent (signals to one process merge).
            wait_for(lambda: server.log_path.read_text().count("reloaded ") >= i, timeout=30,
                     what=f"reload {i} in the log")
            assert server.proc.poll() is None, "the server died during the storm"
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)

    assert server.proc.poll() is None
    assert server.get("/healthz")[0] == 200
    pings, reads = results["pings"], results["reads"]
    assert sum(len(p) for p in pings) > 0 and sum(len(r) for r in reads) > 0
    for k in range(2):
        assert [s for s in pings[k] if s != 200] == [], f"pings on beat-{k} that were not answered 200"
        assert [s for s in reads[k] if s != 200] == [], "API reads that failed during reloads"
    assert results["writes"] and [s for s in results["writes"] if s != 200] == [], "writes with a kept token"

    # What the storm carried, for whoever reads the output with -rP.
    print(f"{RELOADS} reloads; pings answered 200: {[p.count(200) for p in pings]}; "
          f"reads: {sum(len(r) for r in reads)}; writes: {len(results['writes'])}")

    # Every ping answered 200 is stored.
    for k, name in enumerate(["beat-one", "beat-two"]):
        status, body, _ = server.get(f"/api/v1/monitors/{name}/pings?limit=1000")
        assert status == 200 and len(body["pings"]) == pings[k].count(200), name

    # The last config (number RELOADS, even) is in force: no `extra`, its tokens only.
    wait_for(lambda: server.get("/api/v1/monitors/extra")[0] == 404, what="`extra` gone with the last config")
    for earlier in (RELOADS - 1, RELOADS - 2):
        assert api_call(server, "POST", "/api/v1/monitors/beat-one/pause", token=admin_token(earlier))[0] == 401
    assert api_call(server, "POST", "/api/v1/monitors/beat-one/pause", token=admin_token(RELOADS))[0] == 200
    report = f"{server.base}/api/v1/jobs/storm/report"

    def report_status(token):
        request = urllib.request.Request(report, data=b"{}", method="POST",
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    assert report_status(report_token(RELOADS - 1)) == 401
    assert report_status(report_token(RELOADS)) != 401
