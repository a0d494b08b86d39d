"""The dashboard as its users see it, in real Chromium against the real binary: the monitor
list (a bar of recent checks coloured by result, uptime, live rows, search, bulk pause),
the monitor form for every type (errors beside the field, input kept), pages that tell
the truth (a heartbeat's uptime is time, maintenance is a state everywhere) and every page
at a phone's 390 px without a horizontal scroll. Screenshots land in test-artifacts/."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import BINARY, ROOT, api_call, wait_for
from test_web import AUTH_CONFIG, TOKEN, browser, login, screenshot  # noqa: F401 (browser is a fixture)

ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
DESK, PHONE = (1280, 900), (390, 844)


class ScriptedTarget:
    """An HTTP target that answers each request with the next status of a script, then 200."""

    def __init__(self, script):
        self.script = list(script)
        self.lock = threading.Lock()
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                with target.lock:
                    status = target.script.pop(0) if target.script else 200
                payload = b'{"status": "ok"}'
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def http_monitor(name, port, interval="200ms", tags="[]"):
    return f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{port}/health
    interval: {interval}
    timeout: 1s
    tags: {tags}
    conditions: ["[STATUS] == 200"]"""


def whole_page(browser, name, size):
    """A screenshot of the whole page at `size`'s width (the window grows to the page's height
    for it, then goes back)."""
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(size[0], max(size[1], min(height + 140, 6000)))
    screenshot(browser, name)
    browser.set_window_size(*size)


def visible_text(browser):
    return browser.execute_script("return document.body.innerText")


def rows_state(browser):
    """Each row of the list as the page shows it now, read in one script (the rows are
    replaced every few seconds)."""
    return browser.execute_script("""
      return Object.fromEntries([...document.querySelectorAll('tr.mon')].map(r => [r.dataset.monitor, {
        status: r.dataset.status, hidden: r.hidden,
        ok: r.querySelectorAll('.beats i.b-ok').length, bad: r.querySelectorAll('.beats i.b-bad').length,
        up24: r.querySelector('td[data-label="24 h"]').textContent.trim(),
        up30: r.querySelector('td[data-label="30 d"]').textContent.trim(),
        pill: r.querySelector('.pill').textContent.trim()}]))""")


def test_the_list_shows_recent_checks_uptime_and_updates_by_itself(start_server, health_target, browser):
    # Seven good answers and three bad ones, in that order, then good again.
    flaky = ScriptedTarget([200, 503, 200, 200, 503, 503, 200, 200, 200, 200])
    try:
        server = start_server("monitors:" + http_monitor("flaky", flaky.port, interval="2s", tags="[training]")
                              + http_monitor("rank0-health", health_target.port, tags="[training]")
                              + http_monitor("chat-server", health_target.port, tags="[inference]") + AUTH_CONFIG)
        # Paused at its tenth check, so its bar holds those ten.
        wait_for(lambda: len(server.monitor("flaky")["results"]) >= 10, timeout=40, interval=0.05,
                 what="flaky's ten checks")
        assert api_call(server, "POST", "/api/v1/monitors/flaky/pause", token=TOKEN)[0] == 200
        results = server.get("/api/v1/monitors/flaky?limit=30")[1]["results"]
        failed = sum(1 for r in results if not r["ok"])

        login(browser, server)
        browser.set_window_size(*DESK)
        browser.get(server.base + "/")
        rows = wait_for(lambda: (r := rows_state(browser)) and len(r) == 3 and r, what="three rows")
        assert (rows["flaky"]["bad"], rows["flaky"]["ok"]) == (failed, len(results) - failed)
        if len(results) == 10:
            assert (rows["flaky"]["bad"], rows["flaky"]["ok"]) == (3, 7), "3 of the last 10 failed: 3 red, 7 green"
        assert re.fullmatch(r"\d+\.\d\d%", rows["rank0-health"]["up24"]) and rows["rank0-health"]["up30"]
        assert not ISO.search(visible_text(browser)), "times read as words, never raw ISO 8601"
        assert browser.find_element(By.CSS_SELECTOR, 'tr[data-monitor="rank0-health"] .since time').get_attribute(
            "title").endswith(" UTC"), "the exact time, in UTC, on hover"

        # Search narrows the rows as one types; the filters keep working without it.
        browser.find_element(By.ID, "q").send_keys("chat")
        wait_for(lambda: [n for n, r in rows_state(browser).items() if not r["hidden"]] == ["chat-server"],
                 what="the search to leave chat-server alone")
        browser.find_element(By.ID, "q").clear()
        browser.find_element(By.ID, "q").send_keys(" ")

        # A monitor that goes down shows it within 5 s, without a reload.
        browser.execute_script("window.notReloaded = true")
        health_target.degrade()
        server.wait_status("rank0-health", "down", timeout=20)
        wait_for(lambda: rows_state(browser)["rank0-health"]["status"] == "down", timeout=5, interval=0.1,
                 what="the row to turn down by itself")
        assert browser.execute_script("return window.notReloaded === true")
        assert "Down" in rows_state(browser)["rank0-health"]["pill"]
        whole_page(browser, "dashboard-desktop", DESK)
        browser.set_window_size(*PHONE)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
        whole_page(browser, "dashboard-phone", PHONE)
        browser.set_window_size(*DESK)

        # The monitor's page: uptime per range, a chart with ranges, events, no raw times.
        browser.get(server.base + "/monitors/rank0-health")
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#chart canvas"), what="the chart")
        assert [e.text.split("\n")[-1] for e in browser.find_elements(By.CSS_SELECTOR, "#uptime > div")] == \
            ["1 h", "24 h", "7 d", "30 d"]
        assert "Down" in browser.find_element(By.ID, "events").text
        browser.find_element(By.CSS_SELECTOR, '.ranges a[data-range="1h"]').click()
        wait_for(lambda: browser.current_url.endswith("?range=1h"), what="the 1 h range")
        assert not ISO.search(visible_text(browser))
        whole_page(browser, "monitor-desktop", DESK)
        browser.set_window_size(*PHONE)
        browser.refresh()
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#chart canvas"), what="the chart on a phone")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
        whole_page(browser, "monitor-phone", PHONE)
        browser.set_window_size(*DESK)
        browser.get(server.base + "/")

        # Several paused at once, and resumed at once.
        for name in ("rank0-health", "chat-server"):
            browser.find_element(By.CSS_SELECTOR, f'input[name="pick.{name}"]').click()
        browser.find_element(By.ID, "bulk-pause").click()
        for name in ("rank0-health", "chat-server"):
            server.wait_status(name, "paused")
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, 'input[name="pick.flaky"]'), what="the list again")
        for name in ("rank0-health", "chat-server", "flaky"):
            browser.find_element(By.CSS_SELECTOR, f'input[name="pick.{name}"]').click()
        browser.find_element(By.ID, "bulk-resume").click()
        for name in ("rank0-health", "chat-server", "flaky"):
            wait_for(lambda: server.monitor(name)["status"] != "paused", what=f"{name} resumed")
    finally:
        flaky.close()


def field_error(browser, field):
    found = browser.find_elements(By.ID, f"n-{field}-error")
    return found[0].text if found else ""


def test_every_type_is_made_in_the_form_and_an_error_keeps_the_input(start_server, health_target, browser):
    server = start_server("monitors:" + http_monitor("rank0-health", health_target.port) + AUTH_CONFIG)
    login(browser, server)
    browser.set_window_size(*DESK)

    def open_form(kind):
        browser.get(server.base + "/add-monitor")
        Select(browser.find_element(By.ID, "n-type")).select_by_value(kind)

    # A heartbeat: only its own fields show.
    open_form("heartbeat")
    assert not browser.find_element(By.ID, "n-url").is_displayed()
    browser.find_element(By.ID, "n-name").send_keys("nightly-checkpoint")
    browser.find_element(By.ID, "n-period").send_keys("1h")
    browser.find_element(By.ID, "n-grace").send_keys("10m")
    browser.find_element(By.ID, "n-tags").send_keys("training")
    browser.find_element(By.ID, "p-dep.rank0-health").click()
    browser.find_element(By.ID, "create").click()
    wait_for(lambda: browser.current_url.endswith("/monitors/nightly-checkpoint"), what="the heartbeat's page")
    made = server.monitor("nightly-checkpoint")
    assert made["type"] == "heartbeat" and made["tags"] == ["training"] and made["depends_on"] == ["rank0-health"]
    assert made["heartbeat"]["period_ms"] == 3_600_000 and made["heartbeat"]["grace_ms"] == 600_000

    # A job.
    open_form("job")
    browser.find_element(By.ID, "n-name").send_keys("llama-7b")
    browser.find_element(By.ID, "n-world_size").send_keys("4")
    browser.find_element(By.ID, "n-thresholds.straggler_ratio").send_keys("1.5")
    browser.find_element(By.ID, "create").click()
    wait_for(lambda: browser.current_url.endswith("/monitors/llama-7b"), what="the job's page")
    assert server.monitor("llama-7b")["type"] == "job"

    # A bad URL: the form again, the error beside the URL, everything typed still there.
    open_form("http")
    browser.find_element(By.ID, "n-name").send_keys("inference-api")
    browser.find_element(By.ID, "n-url").send_keys("htp:/nowhere")
    browser.find_element(By.ID, "n-interval").send_keys("30s")
    browser.find_element(By.ID, "n-conditions").send_keys("[STATUS] == 200")
    browser.find_element(By.ID, "create").click()
    wait_for(lambda: field_error(browser, "url"), what="the error beside the URL")
    assert "url: found 'htp:/nowhere'" in field_error(browser, "url")
    assert browser.find_element(By.ID, "n-url").get_attribute("aria-invalid") == "true"
    assert browser.find_element(By.ID, "n-name").get_attribute("value") == "inference-api"
    assert browser.find_element(By.ID, "n-interval").get_attribute("value") == "30s"
    assert browser.find_element(By.ID, "n-conditions").get_attribute("value") == "[STATUS] == 200"
    assert Select(browser.find_element(By.ID, "n-type")).first_selected_option.get_attribute("value") == "http"
    assert "problem+json" not in browser.page_source and "about:blank" not in browser.page_source
    screenshot(browser, "monitor-form-error")
    url = browser.find_element(By.ID, "n-url")
    url.clear()
    url.send_keys(f"http://127.0.0.1:{health_target.port}/health")
    browser.find_element(By.ID, "create").click()
    wait_for(lambda: browser.current_url.endswith("/monitors/inference-api"), what="the fixed monitor's page")
    assert server.monitor("inference-api")["interval_ms"] == 30_000

    # Edited in the same form; a typo in the JSON editor keeps what was typed.
    browser.get(server.base + "/monitors/inference-api/edit")
    assert browser.find_element(By.ID, "n-conditions").get_attribute("value") == "[STATUS] == 200"
    interval = browser.find_element(By.ID, "n-interval")
    interval.clear()
    interval.send_keys("5x")
    browser.find_element(By.ID, "create").click()
    wait_for(lambda: field_error(browser, "interval"), what="the error beside the interval")
    assert browser.find_element(By.ID, "n-interval").get_attribute("value") == "5x"
    browser.find_element(By.ID, "edit-toggle").click()
    area = browser.find_element(By.ID, "spec")
    area.clear()
    area.send_keys('{"name": "inference-api", "type": "http", "url": "http://x", "interval": "soon"}')
    browser.find_element(By.ID, "save").click()
    wait_for(lambda: browser.find_elements(By.ID, "json-error"), what="the JSON editor's error")
    assert "interval: found 'soon'" in browser.find_element(By.ID, "json-error").text
    assert '"soon"' in browser.find_element(By.ID, "spec").get_attribute("value")
    assert server.monitor("inference-api")["interval_ms"] == 30_000, "nothing half-applied"


def seed_heartbeat_outage(db_path, now_ms):
    """What the server stores for a heartbeat pinged 81 minutes ago that missed its deadline
    a minute later and is DOWN since: the two results, their rollups, the open incident and
    the state. Rows are the server's own tables and columns."""
    minute, hour, day = 60_000, 3_600_000, 86_400_000
    up_at, down_at = now_ms - 81 * minute, now_ms - 80 * minute
    db = sqlite3.connect(db_path)
    with db:
        db.execute("INSERT INTO check_results (monitor, at_ms, ok, latency_ms) VALUES ('nightly', ?, 1, 0)", (up_at,))
        db.execute("INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause) VALUES ('nightly', ?, 0, 0, ?)",
                   (down_at, "no ping for 1m (expected every 1m, grace 0s)"))
        for table, width in (("uptime_hourly", hour), ("uptime_daily", day)):
            for at, ok in ((up_at, 1), (down_at, 0)):
                start = at - at % width
                db.execute(f"INSERT INTO {table} (monitor, start_ms, checks, ok, latency_sum_ms) VALUES "
                           "('nightly', ?, 1, ?, 0) ON CONFLICT DO UPDATE SET checks = checks + 1, ok = ok + excluded.ok",
                           (start, ok))
        db.execute("INSERT INTO incidents (id, monitor, started_ms, cause) VALUES (1, 'nightly', ?, 'no ping for 1m')",
                   (down_at,))
        db.execute("INSERT INTO monitor_state (monitor, status, since_ms, last_check_ms, last_error, "
                   "consecutive_failures, open_incident_id) VALUES ('nightly', 'down', ?, ?, 'no ping for 1m', 1, 1)",
                   (down_at, down_at))
    db.close()


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_pages_tell_the_truth_about_heartbeats_and_maintenance(start_server, health_target, browser, tmp_path):
    now = datetime.now(timezone.utc)
    config = f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, grace: 10m, token: truth-heartbeat-token-0123456789}}
{http_monitor("held", health_target.port)}
maintenance:
  - monitors: [held]
    start: {rfc3339(now - timedelta(minutes=5))}
    end: {rfc3339(now + timedelta(hours=2))}
status_pages:
  - slug: ml
    title: ML Training
    groups:
      - name: Training
        monitors: [nightly, held]
""" + AUTH_CONFIG
    server = start_server(config)  # makes the schema
    server.stop()
    seed_heartbeat_outage(tmp_path / "data" / "trainwatch.db", int(time.time() * 1000))
    server.start()

    # Down for 80 of its 81 watched minutes: about 1 %, where counting results said 50 %.
    login(browser, server)
    browser.set_window_size(*DESK)
    browser.get(server.base + "/")
    rows = wait_for(lambda: (r := rows_state(browser)) and len(r) == 2 and r, what="the rows")
    pct = float(rows["nightly"]["up24"].rstrip("%"))
    assert 0.5 < pct < 2.5, rows["nightly"]
    browser.get(server.base + "/monitors/nightly")
    cards = {e.text.split("\n")[-1]: e.text.split("\n")[0] for e in browser.find_elements(By.CSS_SELECTOR, "#uptime > div")}
    assert 0.5 < float(cards["24 h"].rstrip("%")) < 2.5, cards
    assert 0.5 < float(cards["30 d"].rstrip("%")) < 2.5, cards
    svg = server.get("/badge/nightly/uptime-30d.svg")[1]
    assert 0.5 < float(re.search(r"(\d+\.\d\d)%", svg).group(1)) < 2.5, svg

    # The monitor inside a window shows maintenance: API, list, its page, status page, badge.
    listed = {m["name"]: m for m in server.get("/api/v1/monitors")[1]["monitors"]}
    assert listed["held"]["maintenance"] and listed["held"]["maintenance"]["until"]
    assert listed["nightly"]["maintenance"] is None
    browser.get(server.base + "/")
    wait_for(lambda: rows_state(browser)["held"]["status"] == "maintenance", what="the maintenance row")
    assert "Maintenance" in rows_state(browser)["held"]["pill"]
    browser.get(server.base + "/monitors/held")
    assert "Maintenance" in browser.find_element(By.ID, "state").text
    assert "maintenance window" in browser.find_element(By.ID, "maintenance").text
    page = server.get("/api/v1/status/ml")[1]
    shown = {m["name"]: m for g in page["groups"] for m in g["monitors"]}
    assert shown["held"]["status"] == "maintenance" and shown["held"]["status_word"] == "Maintenance"
    assert "Maintenance" in server.get("/badge/held/status.svg")[1]

    # The overdue heartbeat's incident is ongoing on the status page, not past.
    browser.get(server.base + "/status/ml")
    ongoing = browser.find_element(By.ID, "ongoing").find_element(By.XPATH, "..").text
    assert "nightly" in ongoing and "Ongoing" in ongoing
    assert "nightly" not in browser.find_element(By.ID, "past").find_element(By.XPATH, "..").text


PHONE_CONFIG = """
monitors:
  - {{name: rank0-health, type: http, url: "http://127.0.0.1:{port}/health", interval: 1s}}
  - name: grid
    type: job
    world_size: 4
  - {{name: nightly, type: heartbeat, period: 1h, grace: 10m, token: phone-heartbeat-token-0123456789}}
  - {{name: gateway, type: tcp, host: 127.0.0.1, port: 1, interval: 2s}}
  - {{name: resolver, type: dns, query: example.invalid, resolver: "127.0.0.1:1", interval: 2s}}
  - {{name: cert, type: tls, host: 127.0.0.1, port: 1, interval: 5s}}
  - {{name: router, type: icmp, host: 127.0.0.1, interval: 2s}}
status_pages:
  - slug: ml
    title: ML Training
    groups:
      - name: Training
        monitors: [grid, nightly, rank0-health]
"""


def test_every_page_fits_a_phone(start_server, health_target, browser, tmp_path):
    server = start_server(PHONE_CONFIG.format(port=health_target.port) + AUTH_CONFIG)
    base_env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    base_env.update(PYTHONPATH=str(ROOT / os.environ.get("TRAINWATCH_BUILD", "build") / "python"),
                    TRAINWATCH_JOB="grid", WORLD_SIZE="4")
    procs = {}
    try:
        for n, node in enumerate(("node-a", "node-b")):
            env = dict(base_env, TRAINWATCH_DIR=str(tmp_path / node), TRAINWATCH_NODE=node)
            procs[node] = subprocess.Popen([BINARY, "agent", "--job", "grid", "--listen", "127.0.0.1:0", "--dir",
                                            str(tmp_path / node), "--server", server.base, "--report-every", "0.5"],
                                           env=env, stderr=subprocess.DEVNULL)
            for local in range(2):
                rank = 2 * n + local
                procs[rank] = subprocess.Popen(["/usr/bin/python3", str(ROOT / "tests/integration/paced_rank.py")],
                                               env=dict(env, RANK=str(rank), LOCAL_RANK=str(local)),
                                               stdout=subprocess.PIPE)
                assert procs[rank].stdout.readline().strip() == b"ready"
        login(browser, server)
        wait_for(lambda: len((server.get("/api/v1/jobs/grid")[1] or {}).get("ranks", [])) == 4, timeout=30,
                 what="the job's four ranks")
        api_call(server, "POST", "/api/v1/maintenance", {"monitors": ["gateway"], "duration": "1h"}, token=TOKEN)
        pages = ["/", "/monitors/rank0-health", "/monitors/nightly", "/monitors/grid", "/monitors/gateway",
                 "/monitors/resolver", "/monitors/cert", "/monitors/router", "/jobs/grid", "/jobs", "/status/ml",
                 "/notifications", "/maintenance", "/settings/users", "/settings/tokens", "/audit", "/add-monitor"]
        wide = {}
        browser.set_window_size(*PHONE)
        for path in pages:
            browser.get(server.base + path)
            wait_for(lambda: browser.execute_script("return document.readyState") == "complete", what=path)
            if path == "/jobs/grid":
                wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, ".chart canvas")) >= 3, timeout=20,
                         what="the job's charts")
                whole_page(browser, "job-phone", PHONE)
            width = browser.execute_script("return document.documentElement.scrollWidth")
            if width > PHONE[0]:
                wide[path] = width
        assert not wide, f"pages wider than a {PHONE[0]} px phone: {wide}"

        browser.set_window_size(*DESK)
        browser.get(server.base + "/jobs/grid")
        wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, ".chart canvas")) >= 3, timeout=20,
                 what="the job's charts")
        legend = browser.execute_script(
            "return [...document.querySelectorAll('.chart[data-metric=step_time] .u-legend .u-label')]"
            ".map(l => l.textContent)")
        assert any(label.startswith("rank ") for label in legend), f"the chart names a rank: {legend}"
        assert any("median" in label for label in legend), legend
        whole_page(browser, "job-desktop", DESK)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
            p.wait()


def test_a_channel_has_a_field_per_key_and_a_test_send_shows_in_its_health(start_server, browser):
    from receivers import HttpReceiver
    receiver = HttpReceiver()
    try:
        server = start_server("monitors:" + http_monitor("gateway", 1) + AUTH_CONFIG)
        login(browser, server)
        browser.get(server.base + "/notifications")
        Select(browser.find_element(By.ID, "c-type")).select_by_value("slack")
        assert not browser.find_element(By.ID, "c-webhook-url").is_displayed(), "only slack's fields show"
        assert browser.find_element(By.ID, "c-slack-webhook_url").get_attribute("type") == "password"
        browser.find_element(By.ID, "c-name").send_keys("ml-slack")
        browser.find_element(By.ID, "c-slack-webhook_url").send_keys(receiver.base + "/services/T0k3n")
        browser.find_element(By.ID, "save-channel").click()
        row = lambda: browser.find_element(By.XPATH, "//tr[@data-channel='ml-slack']").text
        wait_for(lambda: browser.find_elements(By.XPATH, "//tr[@data-channel='ml-slack']"), what="the new channel")
        assert "unknown" in row() and "never" in row()
        assert "T0k3n" not in browser.page_source, "a secret is never shown back"

        browser.find_element(By.XPATH, "//tr[@data-channel='ml-slack']//button[text()='Send a test']").click()
        wait_for(lambda: browser.find_elements(By.ID, "notice"), what="the test's outcome")
        assert "delivered" in browser.find_element(By.ID, "notice").text
        assert "ok" in browser.find_element(By.XPATH, "//tr[@data-channel='ml-slack']//td[@data-label='health']").text
        assert "never" not in browser.find_element(
            By.XPATH, "//tr[@data-channel='ml-slack']//td[@data-field='last-success']").text
        assert len(receiver.requests) == 1

        browser.get(server.base + "/notifications/ml-slack/edit")
        field = browser.find_element(By.ID, "c-slack-webhook_url")
        assert field.get_attribute("value") == "" and "leave empty to keep it" in field.find_element(
            By.XPATH, "..").text
    finally:
        receiver.close()


def test_an_admin_makes_an_editor_a_token_with_the_editors_role(start_server, browser):
    from test_people_pages import log_in
    from test_roles import hash_password
    server = start_server(f"""
monitors:
  - {{name: gateway, type: tcp, host: 127.0.0.1, port: 1, interval: 1h}}
auth:
  users:
    - {{name: root, role: admin, password_hash: "{hash_password('root long password 1')}"}}
    - {{name: ed, role: editor, password_hash: "{hash_password('ed long password 22')}"}}
""")
    log_in(browser, server, "root", "root long password 1")
    browser.get(server.base + "/settings/tokens")
    Select(browser.find_element(By.ID, "t-owner")).select_by_value("ed")
    roles = {o.get_attribute("value"): o.get_attribute("disabled") for o in
             Select(browser.find_element(By.ID, "t-role")).options}
    assert roles["admin"] and not roles["editor"], "roles above the owner's are not offered"
    browser.find_element(By.ID, "t-name").send_keys("ci")
    browser.find_element(By.ID, "make-token").click()
    wait_for(lambda: browser.find_elements(By.ID, "new-token-value"), what="the new token")
    row = browser.find_element(By.XPATH, "//tr[@data-name='ci']")
    assert "ed" in row.find_element(By.XPATH, "td[@data-field='owner']").text
    assert "editor" in row.text
