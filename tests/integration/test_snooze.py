"""Snoozing a monitor's alerts from the API and the dashboard: the real binary, a real
SQLite file, a real webhook receiver on loopback, and Chromium for the page. A snooze
holds alerts and changes nothing a reader of the status page sees."""
from datetime import datetime, timedelta, timezone

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import wait_for
from test_maintenance import call, config, deliveries, receiver, windows  # noqa: F401 (receiver is a fixture)
from test_web import browser, login, screenshot  # noqa: F401 (browser is a fixture)


def snooze_state(server):
    status, body, _ = server.get("/api/v1/monitors/held/snooze")
    assert status == 200, body
    return body


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def test_a_snooze_holds_the_down_alert_while_pages_show_the_outage(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    server.wait_status("held", "up")
    assert snooze_state(server) == {"monitor": "held", "snoozed": False, "until": None}

    asked_at = datetime.now(timezone.utc)
    status, body, _ = call(server, "POST", "/api/v1/monitors/held/snooze", {"for": "1h"})
    assert status == 200, body
    assert body["snoozed"] is True
    assert abs(parse_time(body["until"]) - (asked_at + timedelta(hours=1))) < timedelta(seconds=5)
    assert snooze_state(server) == body

    # The outage is on every page as it is; only its alert waits.
    health_target.degrade()
    server.wait_status("held", "down")
    wait_for(lambda: [d for d in deliveries(server, "held") if d["kind"] == "down" and d["status"] == "pending"],
             what="the DOWN in the outbox")
    assert receiver.all() == [], "a snoozed monitor's DOWN must wait"
    assert server.monitor("held")["maintenance"] is None
    page = server.get("/monitors/held")[1]
    assert "Alerts snoozed until" in page and "Inside a maintenance window" not in page

    # It is stored: a restart keeps it.
    server.stop()
    server.start()
    assert snooze_state(server)["until"] == body["until"]
    assert [w for w in windows(server).values() if w["snooze"]][0]["monitors"] == ["held"]

    # Unsnoozing lets the held DOWN out at once.
    status, _, _ = call(server, "DELETE", "/api/v1/monitors/held/snooze")
    assert status == 204
    assert snooze_state(server)["snoozed"] is False
    [down] = wait_for(lambda: receiver.accepted("/hook"), what="the DOWN released by the unsnooze")
    assert down["body"]["event"] == "down" and down["body"]["monitor"]["name"] == "held"

    entries = call(server, "GET", "/api/v1/audit")[1]["entries"]
    actions = [e["action"] for e in entries]
    assert "POST /api/v1/monitors/held/snooze" in actions and "DELETE /api/v1/monitors/held/snooze" in actions


def test_a_monitor_that_recovers_during_its_snooze_sends_nothing(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    server.wait_status("held", "up")
    assert call(server, "POST", "/api/v1/monitors/held/snooze", {"for": "15m"})[0] == 200
    health_target.degrade()
    server.wait_status("held", "down")
    health_target.recover()
    server.wait_status("held", "up")
    wait_for(lambda: deliveries(server, "held") and all(d["status"] == "cancelled" for d in deliveries(server, "held")),
             what="the DOWN and its recovery dropped together")
    assert call(server, "DELETE", "/api/v1/monitors/held/snooze")[0] == 204
    assert receiver.all() == [], "nothing is left to send after the snooze"


def test_snooze_requests_are_checked(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    status, body, headers = call(server, "POST", "/api/v1/monitors/held/snooze", {"for": "1h"}, token=None)
    assert status == 401 and headers["Content-Type"].startswith("application/problem+json")
    assert call(server, "DELETE", "/api/v1/monitors/held/snooze", token=None)[0] == 401
    status, body, _ = call(server, "POST", "/api/v1/monitors/held/snooze", {"for": "30s"})
    assert status == 400 and body["detail"] == "for: found '30s'; expected a length from 1m to 7d", body
    status, body, _ = call(server, "POST", "/api/v1/monitors/held/snooze", {"for": "a while"})
    assert status == 400 and body["detail"].startswith("for: found 'a while'"), body
    assert call(server, "POST", "/api/v1/monitors/held/snooze", raw="{not json")[0] == 400
    assert call(server, "POST", "/api/v1/monitors/nosuch/snooze", {"for": "1h"})[0] == 404
    assert server.get("/api/v1/monitors/nosuch/snooze")[0] == 404
    assert snooze_state(server)["snoozed"] is False


def test_the_dashboard_snoozes_and_unsnoozes(start_server, health_target, receiver, browser):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    server.wait_status("held", "up")
    browser.get(server.base + "/monitors/held")
    assert not browser.find_elements(By.ID, "snooze"), "the form needs a session"
    login(browser, server)
    browser.get(server.base + "/monitors/held")
    Select(browser.find_element(By.ID, "snooze-for")).select_by_visible_text("4 hours")
    browser.find_element(By.ID, "snooze").click()
    notice = wait_for(lambda: browser.find_elements(By.ID, "snoozed"), what="the snoozed notice")[0]
    assert notice.text.startswith("🔕 Alerts snoozed until ") and "UTC" in notice.text, notice.text
    until = snooze_state(server)["until"]
    assert abs(parse_time(until) - (datetime.now(timezone.utc) + timedelta(hours=4))) < timedelta(seconds=30)
    assert notice.find_element(By.TAG_NAME, "time").get_attribute("datetime") == until
    screenshot(browser, "monitor-snoozed")

    browser.find_element(By.ID, "unsnooze").click()
    wait_for(lambda: browser.find_elements(By.ID, "snooze"), what="the snooze form back")
    assert not browser.find_elements(By.ID, "snoozed")
    assert snooze_state(server)["snoozed"] is False
