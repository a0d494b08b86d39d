"""The pages in a real browser: headless Chromium through Selenium against the real server.

Screenshots land in test-artifacts/ (gitignored) so a failure can be looked at.
"""
import collections
import json
import pathlib
import re
import time
import urllib.error
import urllib.request

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import ROOT, HealthTarget, wait_for

ARTIFACTS = ROOT / "test-artifacts"
TOKEN = "web-test-admin-token-0123456789"
XSS = "<script>alert(1)</script>"


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,1400"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


def screenshot(driver, name):
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def http_monitor(name, port, extra=""):
    return f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    timeout: 1s
    conditions:
      - "[STATUS] == 200"
      - "[BODY].status == ok"
{extra}"""


def reload_until(driver, url, predicate, what, timeout=20.0):
    def check():
        driver.get(url)
        return predicate()
    return wait_for(check, timeout=timeout, interval=0.5, what=what)


def test_status_page_banner_and_bars_follow_a_monitor_down_and_back(start_server, health_target, browser):
    other = HealthTarget()
    try:
        server = start_server("monitors:" + http_monitor("rank0-health", health_target.port)
                              + http_monitor("chat-server", other.port) + """
status_pages:
  - slug: ml-training
    title: ML Training Infrastructure
    description: Training jobs and the chat server
    groups:
      - name: Training
        monitors: [rank0-health]
      - name: Inference
        monitors: [chat-server]
""")
        server.wait_status("rank0-health", "up")
        server.wait_status("chat-server", "up")
        url = server.base + "/status/ml-training"
        banner = lambda: browser.find_element(By.ID, "banner").text
        reload_until(browser, url, lambda: "All systems operational" in banner(), "an operational banner")
        assert "<script" not in browser.page_source  # reads fine with JavaScript off: there is none
        rows = browser.find_elements(By.CSS_SELECTOR, "li.monitor")
        assert [r.get_attribute("data-monitor") for r in rows] == ["rank0-health", "chat-server"]
        bars = rows[0].find_elements(By.CSS_SELECTOR, "ol.days li")
        assert len(bars) == 90
        assert "uptime" in bars[-1].get_attribute("textContent")            # today has data
        assert bars[0].get_attribute("textContent").endswith("no data")     # 90 days ago had none
        assert bars[-1].get_attribute("class") == "d-ok"
        screenshot(browser, "status-operational")

        health_target.degrade()
        server.wait_status("rank0-health", "down")
        reload_until(browser, url, lambda: "Partial outage" in banner(), "a partial-outage banner")
        row = browser.find_element(By.CSS_SELECTOR, 'li.monitor[data-monitor="rank0-health"]')
        assert "Down" in row.find_element(By.CSS_SELECTOR, ".pill").text
        today = row.find_elements(By.CSS_SELECTOR, "ol.days li")[-1]
        assert today.get_attribute("class") in ("d-warn", "d-bad")
        assert "1 incident" in today.get_attribute("textContent")
        # The open incident is listed as ongoing, above the page's past incidents.
        ongoing = browser.find_element(By.ID, "ongoing").find_element(By.XPATH, "..").text
        assert "HTTP 503" in ongoing and "Ongoing" in ongoing
        assert "HTTP 503" not in browser.find_element(By.ID, "past").find_element(By.XPATH, "..").text
        screenshot(browser, "status-partial-outage")

        status, body, _ = server.get("/api/v1/status/ml-training")
        assert status == 200 and body["banner"]["code"] in ("partial_outage", "operational")

        health_target.recover()
        server.wait_status("rank0-health", "up")
        reload_until(browser, url, lambda: "All systems operational" in banner(), "the banner to recover")
        past = browser.find_element(By.ID, "past").find_element(By.XPATH, "..").text
        assert "rank0-health" in past and "ongoing" not in past
        screenshot(browser, "status-recovered")

        assert server.get("/status/nope")[0] == 404
        status, svg, headers = server.get("/badge/rank0-health/status.svg")
        assert status == 200 and "image/svg+xml" in headers["Content-Type"] and "Up" in svg
        status, svg, _ = server.get("/badge/rank0-health/uptime-30d.svg")
        assert status == 200 and re.search(r"\d+\.\d\d%", svg)
    finally:
        other.close()


def login(browser, server, token=TOKEN):
    """Submits the login form and waits for its answer: the click returns before the form's
    answer has replaced the page, and a navigation made in between cancels the login."""
    browser.get(server.base + "/login")
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "login-submit").click()
    wait_for(lambda: browser.find_elements(By.ID, "logout") or browser.find_elements(By.ID, "login-error"),
             what="the login form's answer")


AUTH_CONFIG = f"""
auth:
  admin_tokens: ["{TOKEN}"]
"""


def test_login_and_logout(start_server, health_target, browser):
    server = start_server("monitors:" + http_monitor("rank0-health", health_target.port) + AUTH_CONFIG)
    login(browser, server, token="not-the-token-at-all")
    # The click returns before the form's answer has replaced the page under load.
    error = wait_for(lambda: browser.find_elements(By.ID, "login-error"), what="the login error")
    assert "not an admin token" in error[0].text

    login(browser, server)
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the logout button")
    session = next(c for c in browser.get_cookies() if c["name"] == "tw_session")
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    screenshot(browser, "dashboard-logged-in")

    browser.find_element(By.ID, "logout").click()
    wait_for(lambda: browser.find_elements(By.ID, "login-link"), what="the login link")
    assert not [c for c in browser.get_cookies() if c["name"] == "tw_session"]
    browser.get(server.base + "/")
    assert not browser.find_elements(By.ID, "logout")


def test_csrf_is_rejected(start_server, health_target, browser):
    server = start_server("monitors:" + http_monitor("rank0-health", health_target.port) + AUTH_CONFIG)
    # A login form posted from elsewhere carries no matching CSRF cookie.
    request = urllib.request.Request(server.base + "/login", data=f"token={TOKEN}&csrf=guess".encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    assert error.value.code == 403

    login(browser, server)
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the logout button")
    browser.execute_script("document.querySelector('input[name=csrf]').value = 'forged'")
    browser.find_element(By.ID, "logout").click()
    wait_for(lambda: "CSRF" in browser.page_source, what="the CSRF refusal")
    browser.get(server.base + "/")
    assert browser.find_elements(By.ID, "logout"), "a refused logout must leave the session alone"


def test_a_script_in_any_text_renders_as_text(start_server, health_target, browser):
    health_target.body = dict(health_target.body, status=XSS)
    health_target.status = 200
    server = start_server("monitors:" + http_monitor("rank0-health", health_target.port, f"""    tags: ["{XSS}"]""") + f"""
status_pages:
  - slug: xss
    title: "{XSS}"
    description: "{XSS}"
    groups:
      - name: "{XSS}"
        monitors: [rank0-health]
""")
    server.wait_status("rank0-health", "down")
    for path in ("/status/xss", "/", "/monitors/rank0-health"):
        browser.get(server.base + path)
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text
        assert XSS in browser.find_element(By.TAG_NAME, "body").text, path
    browser.get(server.base + "/status/xss")
    assert browser.find_element(By.TAG_NAME, "h1").text == XSS
    screenshot(browser, "xss-as-text")


def test_heartbeat_page_shows_the_ping_log(start_server, browser):
    server = start_server("""
monitors:
  - name: checkpoint
    type: heartbeat
    period: 1h
    grace: 30m
    token: web-test-heartbeat-token
""")
    request = urllib.request.Request(server.base + "/ping/web-test-heartbeat-token", data=XSS.encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    server.wait_status("checkpoint", "up")
    browser.get(server.base + "/monitors/checkpoint")
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "Expected every 1 h, grace 30 min" in text and "Last ping" in text
    log = browser.find_element(By.ID, "pings").text
    assert "success" in log and XSS in log
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    screenshot(browser, "heartbeat-page")


def test_notifications_page_shows_channel_health_the_delivery_log_and_sends_a_test(start_server, health_target,
                                                                                    browser):
    from receivers import HttpReceiver
    hook = HttpReceiver()
    try:
        server = start_server("monitors:" + http_monitor("rank0-health", health_target.port, "    notify: [hook]")
                              + AUTH_CONFIG + f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - name: hook
    type: webhook
    url: {hook.base}/hook
""")
        health_target.status = 503
        wait_for(lambda: hook.accepted("/hook"), what="the DOWN webhook")
        reload_until(browser, server.base + "/notifications",
                     lambda: "delivered" in browser.find_element(By.ID, "deliveries").text, "a delivered row in the log")
        row = browser.find_element(By.CSS_SELECTOR, '#channels tr[data-channel="hook"]')
        assert "ok" in row.text and "webhook" in row.text, row.text
        log = browser.find_element(By.ID, "deliveries").text
        assert "rank0-health" in log and "down" in log, log
        assert not browser.find_elements(By.XPATH, "//button[text()='Send a test']"), "only an admin may send tests"

        login(browser, server)
        wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the logout button")
        browser.get(server.base + "/notifications")
        before = len(hook.accepted("/hook"))
        browser.find_element(By.XPATH, "//tr[@data-channel='hook']//button[text()='Send a test']").click()
        wait_for(lambda: browser.find_elements(By.ID, "notice"), what="the test's outcome on the page")
        assert "Test message delivered on hook" in browser.find_element(By.ID, "notice").text
        assert len(hook.accepted("/hook")) == before + 1
        screenshot(browser, "notifications")
    finally:
        hook.close()


def test_create_and_edit_a_monitor_from_the_dashboard(start_server, health_target, closed_port, browser):
    server = start_server("monitors:" + http_monitor("rank0-health", health_target.port) + AUTH_CONFIG)
    login(browser, server)
    wait_for(lambda: browser.find_elements(By.ID, "new-monitor"), what="the new monitor link")
    browser.find_element(By.ID, "new-monitor").click()
    wait_for(lambda: browser.find_elements(By.ID, "create"), what="the new monitor form")
    browser.find_element(By.ID, "n-name").send_keys("chat-server")
    Select(browser.find_element(By.ID, "n-type")).select_by_value("tcp")
    browser.find_element(By.ID, "n-host").send_keys("127.0.0.1")
    browser.find_element(By.ID, "n-port").send_keys(str(closed_port))
    browser.find_element(By.ID, "create").click()
    wait_for(lambda: browser.current_url.endswith("/monitors/chat-server"), what="the new monitor's page")

    browser.find_element(By.ID, "edit").click()
    wait_for(lambda: browser.find_elements(By.ID, "edit-toggle"), what="the edit page")
    browser.find_element(By.ID, "edit-toggle").click()
    spec = json.loads(browser.find_element(By.ID, "spec").get_attribute("value"))
    assert spec["type"] == "tcp" and spec["port"] == closed_port, spec
    spec["interval"] = "30s"
    spec["tags"] = ["inference"]
    area = browser.find_element(By.ID, "spec")
    area.clear()
    area.send_keys(json.dumps(spec))
    browser.find_element(By.ID, "save").click()
    # One script reads the page: the form's post navigates, and an element found before
    # that would be stale when read.
    wait_for(lambda: browser.execute_script(
        "return [...document.querySelectorAll('.tags .tag')].map(t => t.textContent).join()") == "inference",
        what="the edited tags")
    with urllib.request.urlopen(server.base + "/api/v1/monitors/chat-server", timeout=10) as response:
        assert json.loads(response.read())["interval_ms"] == 30_000

    # A YAML monitor has no edit form: the file owns it.
    browser.get(server.base + "/monitors/rank0-health")
    assert not browser.find_elements(By.ID, "edit")
    assert browser.get(server.base + "/monitors/rank0-health/edit") is None
    assert "changed there" in browser.find_element(By.TAG_NAME, "body").text


JOB_CONFIG = """
jobs:
  auto_create: false
monitors:
  - name: grid
    type: job
    world_size: 4
    thresholds:
      step_timeout_min: 3s
"""


def test_job_page_rank_grid_marks_a_killed_rank(start_server, browser, tmp_path):
    import signal
    server = start_server(JOB_CONFIG)
    from grid_job import start_grid_job
    procs = {}
    try:
        start_grid_job(server, tmp_path, procs)

        # Read in one script: the live part is replaced every few seconds, which would
        # leave element handles stale between two WebDriver calls.
        def grid():
            cells = browser.execute_script(
                "return [...document.querySelectorAll('.rank')].map(c => [c.dataset.rank, c.dataset.health])")
            return {int(rank): health for rank, health in cells}

        def text_of(selector, attribute="textContent"):
            return browser.execute_script(
                "const e = document.querySelector(arguments[0]); return e ? e[arguments[1]] : ''", selector, attribute)
        def legend_matches_cells():
            """The counts over the grid ("3 ok, 1 down") are of the cells under them, read together."""
            cells, keys = browser.execute_script(
                "return [[...document.querySelectorAll('.rank')].map(c => c.dataset.health),"
                " [...document.querySelectorAll('.legend .key')].map(k => k.textContent.trim())]")
            counted = {m.group(2): int(m.group(1)) for m in (re.search(r"(\d+) (\w+)$", k) for k in keys) if m}
            assert counted == dict(collections.Counter(cells)), (keys, cells)

        reload_until(browser, server.base + "/jobs/grid", lambda: len(grid()) == 4 and "down" not in grid().values(),
                     "four healthy rank cells")
        for _ in range(5):  # ranks move on every report; the counts move with them
            legend_matches_cells()
            time.sleep(0.3)
        nodes = browser.execute_script("return [...document.querySelectorAll('.node')].map(n => n.dataset.node)")
        assert nodes == ["node-a", "node-b"], "cells are grouped by node"
        assert text_of('.node[data-node="node-b"] .rank[data-rank="3"]', "title"), "rank 3 sits under node-b"

        procs[3].send_signal(signal.SIGKILL)
        # No reload: the page's live part refreshes itself.
        wait_for(lambda: grid().get(3) == "down", timeout=20, interval=0.5, what="rank 3's cell to turn down")
        cell = '.rank[data-rank="3"]'
        assert text_of(cell, "title").startswith("rank 3 on node-b: down"), "the state is in words too"
        assert "\u2715" in text_of(cell), "and an icon, not only a colour"
        assert all(h != "down" for r, h in grid().items() if r != 3), grid()
        wait_for(lambda: "rank 3" in text_of("#findings"), timeout=10, interval=0.5, what="a finding naming rank 3")
        wait_for(lambda: "Down" in text_of("#job-state"), timeout=10, interval=0.5, what="the job's pill to read Down")
        legend_matches_cells()
        screenshot(browser, "job-grid")
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            p.wait()


def test_a_reload_replaces_the_status_pages(start_server, health_target):
    def text(title, extra_page=""):
        return "monitors:" + http_monitor("rank0-health", health_target.port) + f"""
status_pages:
  - slug: ml
    title: {title}
    groups:
      - name: Training
        monitors: [rank0-health]
{extra_page}"""
    server = start_server(text("Before the reload"))
    assert "Before the reload" in server.get("/status/ml")[1]
    assert server.get("/status/second")[0] == 404
    server.config_path.write_text(text("After the reload", """  - slug: second
    title: Second page
    groups:
      - name: All
        monitors: [rank0-health]
"""))
    server.reload()
    wait_for(lambda: server.get("/status/second")[0] == 200, what="the new page after SIGHUP")
    assert "After the reload" in server.get("/status/ml")[1], "a reload is not hidden by the page cache"
    assert "Second page" in server.get("/")[1], "the dashboard's nav lists it"
