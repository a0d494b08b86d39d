"""The snooze link in every alert: the real binary, a real SQLite file and a real webhook
receiver on loopback. The link is signed, good once, for a day, and what it did is in the
audit log; opening it does nothing until the form is sent."""
import urllib.error
import urllib.parse
import urllib.request

from conftest import Server, wait_for
from receivers import HttpReceiver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from test_web import browser, screenshot  # noqa: F401 (browser is a fixture)
from test_maintenance import TOKEN, call, deliveries, receiver  # noqa: F401 (receiver is a fixture)

PUBLIC = "https://tw.example.org"


def config(receiver, port):  # noqa: F811
    return f"""
server:
  public_url: {PUBLIC}
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
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


def post_form(server, path, fields):
    data = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(server.base + path, data=data, method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def link_path(url):
    assert url.startswith(PUBLIC + "/snooze/"), url
    return url[len(PUBLIC):]


def down_alert(server, receiver, target):  # noqa: F811
    server.wait_status("held", "up")
    target.degrade()
    server.wait_status("held", "down")
    [down] = wait_for(lambda: receiver.accepted("/hook"), what="the DOWN")
    return down["body"]


def test_the_link_in_a_down_alert_snoozes_the_monitor_once_and_is_audited(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    alert = down_alert(server, receiver, health_target)
    assert alert["event"] == "down"
    path = link_path(alert["snooze_url"])
    assert any(f["value"] == alert["snooze_url"] for f in alert["fields"]), "every channel's text carries the link"

    # Opening it (a mail scanner, a chat preview) changes nothing: it offers the lengths.
    status, page, _ = server.get(path)
    assert status == 200
    assert "held" in page and 'name="for"' in page and f"incident #{alert['incident_id']}" in page
    assert server.get("/api/v1/monitors/held/snooze")[1]["snoozed"] is False

    status, page = post_form(server, path, {"for": "1h"})
    assert status == 200, page
    assert "snoozed until" in page
    assert server.get("/api/v1/monitors/held/snooze")[1]["snoozed"] is True

    # The next alert of the monitor (its recovery) is held by the snooze.
    health_target.recover()
    server.wait_status("held", "up")
    wait_for(lambda: [d for d in deliveries(server, "held") if d["kind"] == "up" and d["status"] in ("pending", "cancelled")],
             what="the recovery held or dropped by the snooze")
    assert [d["body"]["event"] for d in receiver.accepted("/hook")] == ["down"]

    # Once: a second use is refused, and says so.
    status, page = post_form(server, path, {"for": "4h"})
    assert status == 410 and "used already" in page
    # ... and opening it again says so, offering no lengths that would only be refused.
    status, page, _ = server.get(path)
    assert status == 410 and "used already" in page and 'name="for"' not in page

    entries = call(server, "GET", "/api/v1/audit")[1]["entries"]
    [used] = [e for e in entries if e["actor_kind"] == "alert_link"]
    assert used["action"] == "snooze held for 1h"
    assert used["actor"] == f"alert link of incident #{alert['incident_id']}"


def test_the_link_works_in_a_browser_as_the_person_paged_uses_it(start_server, health_target, receiver, browser):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    path = link_path(down_alert(server, receiver, health_target)["snooze_url"])
    browser.get(server.base + path)
    assert "held" in browser.find_element(By.TAG_NAME, "h1").text
    Select(browser.find_element(By.ID, "snooze-for")).select_by_visible_text("4 hours")
    screenshot(browser, "alert-link-choices")
    browser.find_element(By.ID, "snooze").click()
    notice = browser.find_element(By.ID, "snoozed").text
    assert notice.startswith("Alerts of held are snoozed until"), notice
    screenshot(browser, "alert-link-done")
    browser.get(server.base + path)  # the link again, from the mail: it is spent
    assert "used already" in browser.find_element(By.ID, "link-error").text
    assert not browser.find_elements(By.ID, "snooze"), "a spent link offers nothing to choose"
    assert browser.find_element(By.ID, "monitor-link").get_attribute("href").endswith("/monitors/held")


def test_a_changed_link_is_refused_and_snoozes_nothing(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    path = link_path(down_alert(server, receiver, health_target)["snooze_url"])
    incident, expires, mac, monitor = path[len("/snooze/"):].split(".", 3)
    later = f"/snooze/{incident}.{int(expires) + 86400}.{mac}.{monitor}"  # a longer life, same signature
    forged = f"/snooze/{incident}.{expires}.{'0' * 32}.{monitor}"
    for changed in (later, forged, "/snooze/nonsense"):
        status, page = post_form(server, changed, {"for": "1h"})
        assert status == 404, (changed, page)
        assert "was not made by this trainwatch" in page
    assert server.get("/api/v1/monitors/held/snooze")[1]["snoozed"] is False
    # A length outside 1m..7d is refused before the link is spent: it still works after.
    assert post_form(server, path, {"for": "30d"})[0] == 400
    assert post_form(server, path, {"for": "15m"})[0] == 200


def test_the_key_survives_a_restart_so_links_already_sent_still_work(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    path = link_path(down_alert(server, receiver, health_target)["snooze_url"])
    server.stop()
    server.start()
    assert server.get(path)[0] == 200
    assert post_form(server, path, {"for": "15m"})[0] == 200


def test_a_link_one_replica_sent_works_once_on_any_replica(tmp_path, postgres, monkeypatch):
    receiver = HttpReceiver()
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    config = tmp_path / "trainwatch.yaml"
    config.write_text(f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
server:
  public_url: {PUBLIC}
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
monitors:
  - {{name: refused, type: tcp, host: 127.0.0.1, port: 1, interval: 500ms, timeout: 1s}}
""")
    replicas = []
    try:
        for i in range(2):
            replicas.append(Server(config, tmp_path / f"data-{i}", tmp_path / f"replica-{i}.log").start())
        [down] = wait_for(lambda: receiver.accepted("/hook"), timeout=30, what="the DOWN from the owner")
        path = link_path(down["body"]["snooze_url"])
        # One key for the installation: each replica reads the link the owner signed.
        assert all(r.get(path)[0] == 200 for r in replicas)
        assert post_form(replicas[1], path, {"for": "1h"})[0] == 200
        status, page = post_form(replicas[0], path, {"for": "1h"})
        assert status == 410 and "used already" in page
        wait_for(lambda: all(r.get("/api/v1/monitors/refused/snooze")[1]["snoozed"] for r in replicas),
                 what="the snooze on every replica")
    finally:
        for r in replicas:
            r.stop()
        receiver.close()


def test_a_link_to_a_deleted_monitor_says_so_and_is_not_spent(start_server, health_target, receiver):  # noqa: F811
    server = start_server(config(receiver, health_target.port))
    spec = {"name": "made", "type": "tcp", "host": "127.0.0.1", "port": 1, "interval": "500ms", "timeout": "1s"}
    assert call(server, "POST", "/api/v1/monitors", spec)[0] == 201
    [down] = wait_for(lambda: [r for r in receiver.accepted("/hook") if r["body"]["monitor"]["name"] == "made"],
                      what="the DOWN of the monitor made through the API")
    path = link_path(down["body"]["snooze_url"])
    assert call(server, "DELETE", "/api/v1/monitors/made")[0] == 204
    status, page, _ = server.get(path)
    assert status == 404 and "no longer exists" in page
    assert post_form(server, path, {"for": "1h"})[0] == 404
