"""Maintenance windows from the API and the dashboard: the real binary, a real SQLite
file, a real webhook receiver on loopback, and Chromium for the page."""
import re
from datetime import datetime, timedelta, timezone

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from conftest import api_call, wait_for
from receivers import HttpReceiver
from test_web import XSS, browser, login, screenshot  # noqa: F401 (browser is a fixture)

TOKEN = "web-test-admin-token-0123456789"  # test_web's login() uses this one


@pytest.fixture
def receiver():
    r = HttpReceiver()
    yield r
    r.close()


def call(server, method, path, body=None, token=TOKEN, raw=None):
    return api_call(server, method, path, body, token, raw)


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def config(receiver, port):
    return f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
maintenance:
  - {{tags: [batch], daily: "03:00-04:00"}}
monitors:
  - name: held
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    timeout: 1s
    conditions: ["[STATUS] == 200", "[BODY].status == ok"]
auth:
  admin_tokens: ["{TOKEN}"]
"""


def windows(server):
    status, body, _ = server.get("/api/v1/maintenance")
    assert status == 200
    return {w["id"]: w for w in body["windows"]}


def deliveries(server, monitor):
    status, body, _ = server.get(f"/api/v1/deliveries?limit=100&monitor={monitor}")
    assert status == 200
    return body["deliveries"]


def test_an_api_window_holds_a_down_alert_until_it_is_deleted(start_server, health_target, receiver):
    server = start_server(config(receiver, health_target.port))
    server.wait_status("held", "up")
    now = datetime.now(timezone.utc)
    spec = {"monitors": ["held"], "start": rfc3339(now - timedelta(minutes=1)), "end": rfc3339(now + timedelta(hours=1))}
    status, created, headers = call(server, "POST", "/api/v1/maintenance", spec)
    assert status == 201, created
    window_id = created["id"]
    assert created["source"] == "api" and created["active"] is True
    assert headers["Location"] == f"/api/v1/maintenance/{window_id}"

    listed = windows(server)
    assert listed[window_id]["active"] is True and listed[window_id]["monitors"] == ["held"]
    assert listed["yaml-0"]["source"] == "yaml" and listed["yaml-0"]["daily"] == "03:00-04:00"
    page = re.sub(r"<[^>]+>", "", server.get("/maintenance")[1])  # the text a reader sees
    assert window_id in page and "Active until" in page

    health_target.degrade()
    server.wait_status("held", "down")
    # The DOWN is in the outbox but held: no attempt, nothing at the receiver.
    wait_for(lambda: [d for d in deliveries(server, "held") if d["kind"] == "down" and d["status"] == "pending"],
             what="the DOWN in the outbox")
    assert receiver.all() == [], "a DOWN inside a maintenance window must be held"
    assert all(d["attempts"] == 0 for d in deliveries(server, "held"))

    # Deleting the window ends the hold: the DOWN goes out at once.
    status, body, _ = call(server, "DELETE", f"/api/v1/maintenance/{window_id}")
    assert status == 204, body
    assert window_id not in windows(server)
    [down] = wait_for(lambda: receiver.accepted("/hook"), what="the DOWN released by the delete")
    assert down["body"]["event"] == "down" and down["body"]["monitor"]["name"] == "held"
    assert call(server, "DELETE", f"/api/v1/maintenance/{window_id}")[0] == 404


def test_api_windows_survive_a_restart_and_the_files_stay_read_only(start_server, health_target, receiver):
    server = start_server(config(receiver, health_target.port))
    now = datetime.now(timezone.utc)
    spec = {"tags": ["batch"], "start": rfc3339(now + timedelta(hours=1)), "end": rfc3339(now + timedelta(hours=2))}

    status, body, headers = call(server, "POST", "/api/v1/maintenance", spec, token=None)
    assert status == 401 and headers["Content-Type"].startswith("application/problem+json")
    assert call(server, "POST", "/api/v1/maintenance", spec, token="wrong-token-wrong-token")[0] == 401
    assert call(server, "DELETE", "/api/v1/maintenance/yaml-0", token=None)[0] == 401

    status, body, _ = call(server, "POST", "/api/v1/maintenance", dict(spec, start="next tuesday"))
    assert status == 400 and body["detail"].startswith("start: found 'next tuesday'"), body
    status, body, _ = call(server, "POST", "/api/v1/maintenance", dict(spec, colour="red"))
    assert status == 400 and "colour" in body["detail"], body
    status, body, _ = call(server, "POST", "/api/v1/maintenance", {"monitors": ["typo"], "daily": "01:00-02:00"})
    assert status == 400 and body["detail"] == "monitors[0]: found 'typo'; expected the name of a monitor", body
    assert call(server, "POST", "/api/v1/maintenance", raw="{not json")[0] == 400

    status, body, _ = call(server, "DELETE", "/api/v1/maintenance/yaml-0")
    assert status == 409 and "config file" in body["detail"], body
    assert call(server, "DELETE", "/api/v1/maintenance/api-999")[0] == 404

    status, created, _ = call(server, "POST", "/api/v1/maintenance", spec)
    assert status == 201, created
    assert created["active"] is False and created["ended"] is False

    server.stop()
    server.start()
    listed = windows(server)
    assert set(listed) == {"yaml-0", created["id"]}
    assert listed[created["id"]]["tags"] == ["batch"] and listed[created["id"]]["start"] == created["start"]


def rows_with(browser, text):
    """The windows table's rows that hold `text`; none while the form's answer replaces the
    page (the old page's rows go stale under the reader)."""
    try:
        return [r for r in browser.find_elements(By.CSS_SELECTOR, "#windows tbody tr") if text in r.text]
    except StaleElementReferenceException:
        return []


def test_the_dashboard_creates_lists_and_deletes_a_window(start_server, health_target, receiver, browser):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    server.wait_status("held", "up")
    # Any text a client sends is shown as text.
    assert call(server, "POST", "/api/v1/maintenance", {"tags": [XSS], "weekly": "sun 02:00-04:00"})[0] == 201

    browser.get(server.base + "/maintenance")
    assert not browser.find_elements(By.ID, "create-window"), "the form needs a session"
    login(browser, server)
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the logout button")
    browser.find_element(By.LINK_TEXT, "Maintenance").click()
    wait_for(lambda: browser.find_elements(By.ID, "create-window"), what="the new window form")
    assert XSS in browser.find_element(By.ID, "windows").text

    browser.find_element(By.ID, "m-monitors").send_keys("held")
    browser.find_element(By.ID, "m-duration").send_keys("2h")
    browser.find_element(By.ID, "create-window").click()
    row = wait_for(lambda: rows_with(browser, "held"), what="the new window listed")[0]
    assert "Active until" in row.find_element(By.CSS_SELECTOR, '[data-field="active"]').text
    window_id = row.get_attribute("data-window")
    assert windows(server)[window_id]["active"] is True
    screenshot(browser, "maintenance")

    # A bad duration comes back on the page, naming the field.
    browser.find_element(By.ID, "m-monitors").send_keys("held")
    browser.find_element(By.ID, "m-duration").send_keys("soon")
    browser.find_element(By.ID, "create-window").click()
    error = wait_for(lambda: browser.find_elements(By.ID, "maintenance-error"), what="the form's error")[0]
    assert error.text.startswith("duration: found 'soon'")

    browser.get(server.base + "/maintenance")
    browser.find_element(By.CSS_SELECTOR, f'tr[data-window="{window_id}"] .delete-window').click()
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, f'tr[data-window="{window_id}"]'),
             what="the window gone from the page")
    assert window_id not in windows(server)
    # The file's window has no delete button.
    assert not browser.find_elements(By.CSS_SELECTOR, 'tr[data-window="yaml-0"] .delete-window')
