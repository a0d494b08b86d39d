"""Notification channels added, edited, tested and removed from the dashboard (real
Chromium) and the API, against the real binary and a real webhook receiver. The
webhook's URL carries its secret: no page, no API read and no metric may show it.
Channels from the config file are read-only, and a channel created on one replica is
sent to by the others (two replicas on a real PostgreSQL)."""
import json
import secrets
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import Server, api_call, wait_for
from receivers import HttpReceiver
from test_web import browser, login, screenshot  # noqa: F401 (browser is a fixture)

TOKEN = "web-test-admin-token-0123456789"  # test_web's login() uses this one


def config(receiver, monitors=""):
    return f"""
auth:
  admin_tokens: ["{TOKEN}"]
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: oncall, type: webhook, url: "{receiver.base}/file-hook"}}
monitors:
  - {{name: canary, type: tcp, host: 127.0.0.1, port: 9, interval: 1h}}
{monitors}"""


def reads(server):
    """The text of every API read and page that says something about channels or monitors,
    as an admin and as the public."""
    texts = []
    for path in ("/api/v1/notifications", "/api/v1/monitors", "/api/v1/notifications/ml-hook", "/metrics",
                 "/notifications", "/"):
        for token in (TOKEN, None):
            request = urllib.request.Request(server.base + path)
            if token:
                request.add_header("Authorization", f"Bearer {token}")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    texts.append(response.read().decode())
            except urllib.error.HTTPError as error:
                texts.append(error.read().decode())
    return texts


def test_an_admin_adds_a_webhook_in_the_dashboard_and_a_down_reaches_it(start_server, health_target, browser):
    receiver = HttpReceiver()
    secret_path = f"/hook/{secrets.token_hex(12)}"
    url = receiver.base + secret_path
    pages = []

    def visit(path=None):
        if path:
            browser.get(server.base + path)
        pages.append(browser.page_source)

    try:
        server = start_server(config(receiver))
        login(browser, server)
        wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the logout button")
        visit("/notifications")
        # The file's channel says where it comes from, and has no edit or remove.
        oncall = browser.find_element(By.XPATH, "//tr[@data-channel='oncall']")
        assert "from trainwatch.yaml, read-only" in oncall.text
        assert not oncall.find_elements(By.CLASS_NAME, "edit-channel")

        browser.find_element(By.ID, "c-name").send_keys("ml-hook")
        Select(browser.find_element(By.ID, "c-type")).select_by_value("webhook")
        browser.find_element(By.ID, "c-secrets").send_keys(f"url: {url}")
        browser.find_element(By.ID, "save-channel").click()
        wait_for(lambda: browser.find_elements(By.XPATH, "//tr[@data-channel='ml-hook']"), what="the new channel")
        visit()
        assert "added here" in browser.find_element(By.XPATH, "//tr[@data-channel='ml-hook']").text

        browser.find_element(By.XPATH, "//tr[@data-channel='ml-hook']//button[text()='Send a test']").click()
        wait_for(lambda: browser.find_elements(By.ID, "notice"), what="the test's outcome")
        visit()
        assert "Test message delivered on ml-hook" in browser.find_element(By.ID, "notice").text
        assert [r["body"]["event"] for r in receiver.accepted(secret_path)] == ["test"]

        # An edit that sends no secret keeps the URL; the form never shows it.
        browser.find_element(By.XPATH, "//tr[@data-channel='ml-hook']//a[contains(@class,'edit-channel')]").click()
        wait_for(lambda: browser.find_elements(By.ID, "c-settings"), what="the edit form")
        visit()
        assert "url: set" in browser.find_element(By.ID, "c-secrets-hint").text
        assert browser.find_element(By.ID, "c-secrets").get_attribute("value") == ""
        browser.find_element(By.ID, "c-settings").send_keys("timeout: 5s")
        browser.find_element(By.ID, "save-channel").click()
        wait_for(lambda: browser.current_url.endswith("/notifications#channel-ml-hook"), what="the saved edit")
        visit()

        # A monitor made in the dashboard's form, told to notify the new channel.
        browser.get(server.base + "/")
        browser.find_element(By.ID, "new-monitor").click()
        wait_for(lambda: browser.find_elements(By.ID, "create"), what="the new monitor form")
        visit()
        browser.find_element(By.ID, "n-name").send_keys("chat-server")
        Select(browser.find_element(By.ID, "n-type")).select_by_value("http")
        browser.find_element(By.ID, "n-url").send_keys(f"http://127.0.0.1:{health_target.port}/health")
        browser.find_element(By.ID, "p-notify.ml-hook").click()
        browser.find_element(By.ID, "create").click()
        wait_for(lambda: browser.current_url.endswith("/monitors/chat-server"), what="the new monitor's page")
        assert server.monitor("chat-server")["type"] == "http"
        # Then every key through the edit page's JSON editor.
        browser.find_element(By.ID, "edit").click()
        wait_for(lambda: browser.find_elements(By.ID, "edit-toggle"), what="the edit page")
        browser.find_element(By.ID, "edit-toggle").click()
        spec = json.loads(browser.find_element(By.ID, "spec").get_attribute("value"))
        assert spec["notify"] == ["ml-hook"], "the form's pick reached the monitor"
        spec.update(interval="200ms", timeout="1s")
        area = browser.find_element(By.ID, "spec")
        area.clear()
        area.send_keys(json.dumps(spec))
        browser.find_element(By.ID, "save").click()
        wait_for(lambda: server.monitor("chat-server").get("interval_ms") == 200, what="the edited monitor")
        server.wait_status("chat-server", "up")
        visit("/monitors/chat-server")

        health_target.degrade()
        downs = wait_for(lambda: [r for r in receiver.accepted(secret_path) if r["body"]["event"] == "down"],
                         timeout=20, what="the DOWN at the dashboard's webhook")
        assert downs[0]["body"]["monitor"]["name"] == "chat-server"
        visit("/notifications")
        screenshot(browser, "channels")

        # Removing a channel a monitor notifies is refused, naming the monitor.
        browser.find_element(By.XPATH, "//tr[@data-channel='ml-hook']//button[contains(@class,'delete-channel')]").click()
        wait_for(lambda: browser.find_elements(By.ID, "notice"), what="the refusal")
        visit()
        assert "chat-server" in browser.find_element(By.ID, "notice").text
        assert browser.find_elements(By.XPATH, "//tr[@data-channel='ml-hook']")

        leaks = [i for i, text in enumerate(pages + reads(server)) if secret_path in text]
        assert not leaks, f"the webhook URL shows in {len(leaks)} page(s) or read(s)"
        assert secret_path not in server.log_path.read_text()
    finally:
        receiver.close()


def test_channels_through_the_api(start_server, tmp_path):
    receiver = HttpReceiver()
    secret_path = f"/hook/{secrets.token_hex(12)}"
    try:
        server = start_server(config(receiver))
        body = {"name": "ml-hook", "type": "webhook", "url": receiver.base + secret_path}
        assert api_call(server, "POST", "/api/v1/notifications", body)[0] == 401
        status, created, headers = api_call(server, "POST", "/api/v1/notifications", body, token=TOKEN)
        assert status == 201, created
        assert headers["Location"] == "/api/v1/notifications/ml-hook"
        assert created["source"] == "api" and created["read_only"] is False
        assert created["secrets"] == {"url": "set", "secret": "not set", "headers": "not set"}
        assert secret_path not in json.dumps(created)

        # A bad body: 400 problem+json naming the field, what was found and what is expected.
        status, problem, headers = api_call(server, "POST", "/api/v1/notifications",
                                            {"name": "bad", "type": "webhook", "url": "ftp://x/T0k3n"}, token=TOKEN)
        assert status == 400 and headers["Content-Type"] == "application/problem+json"
        assert problem["field"] == "url"
        assert problem["detail"] == "url: found a secret value; expected a http:// or https:// URL with a host"
        status, problem, _ = api_call(server, "POST", "/api/v1/notifications",
                                      {"name": "bad", "type": "webhook", "url": "http://x/", "retries": 3},
                                      token=TOKEN)
        assert status == 400 and problem["field"] == "retries", problem

        # An edit without the URL keeps it: the test send reaches the same path.
        status, edited, _ = api_call(server, "PUT", "/api/v1/notifications/ml-hook",
                                     {"type": "webhook", "timeout": "4s"}, token=TOKEN)
        assert status == 200 and edited["settings"] == {"timeout": "4s"}, edited
        status, sent, _ = api_call(server, "POST", "/api/v1/notifications/ml-hook/test", token=TOKEN)
        assert status == 200 and sent["delivered"], sent
        assert len(receiver.accepted(secret_path)) == 1

        # The file's channels are read-only, and their names taken.
        status, problem, _ = api_call(server, "PUT", "/api/v1/notifications/oncall",
                                      {"type": "webhook", "url": receiver.base + "/x"}, token=TOKEN)
        assert status == 409
        assert problem["detail"] == "'oncall' comes from trainwatch.yaml and is read-only here; edit it there"
        assert api_call(server, "DELETE", "/api/v1/notifications/oncall", token=TOKEN)[0] == 409
        status, problem, _ = api_call(server, "POST", "/api/v1/notifications",
                                      dict(body, name="oncall"), token=TOKEN)
        assert status == 409 and problem["field"] == "name", problem

        listed = api_call(server, "GET", "/api/v1/notifications", token=TOKEN)[1]["notifications"]
        assert [(c["name"], c["source"], c["read_only"]) for c in listed] == [
            ("oncall", "file", True), ("ml-hook", "api", False)]
        public = server.get("/api/v1/notifications")[1]["notifications"]
        assert all("settings" not in c and "secrets" not in c and c["target"] is None for c in public)

        # A monitor that notifies it keeps it until the monitor no longer does.
        monitor = {"name": "api-mon", "type": "tcp", "host": "127.0.0.1", "port": 9, "interval": "1h",
                   "notify": ["ml-hook"]}
        assert api_call(server, "POST", "/api/v1/monitors", monitor, token=TOKEN)[0] == 201
        status, problem, _ = api_call(server, "DELETE", "/api/v1/notifications/ml-hook", token=TOKEN)
        assert status == 409 and "api-mon" in problem["detail"], problem
        assert api_call(server, "DELETE", "/api/v1/monitors/api-mon", token=TOKEN)[0] == 204

        # It survives a restart; then it goes.
        server.stop()
        server = Server(server.config_path, server.data_dir, tmp_path / "server2.log").start()
        try:
            assert server.get("/api/v1/notifications/ml-hook")[0] == 200
            assert api_call(server, "DELETE", "/api/v1/notifications/ml-hook", token=TOKEN)[0] == 204
            assert server.get("/api/v1/notifications/ml-hook")[0] == 404
            for text in reads(server):
                assert secret_path not in text
        finally:
            server.stop()
    finally:
        receiver.close()


def test_a_channel_added_on_one_replica_is_sent_to_by_the_other(start_replicas):
    receiver = HttpReceiver()
    try:
        replicas = start_replicas(2, TOKEN)
        body = {"name": "shared", "type": "webhook", "url": receiver.base + "/shared"}
        assert api_call(replicas[0], "POST", "/api/v1/notifications", body, token=TOKEN)[0] == 201
        # The catalog's bound: the other replica reads it at its next beat (1 s).
        wait_for(lambda: replicas[1].get("/api/v1/notifications/shared")[0] == 200, timeout=5,
                 what="the channel on the other replica")
        status, sent, _ = api_call(replicas[1], "POST", "/api/v1/notifications/shared/test", token=TOKEN)
        assert status == 200 and sent["delivered"], sent
        assert len(receiver.accepted("/shared")) == 1
        assert api_call(replicas[1], "DELETE", "/api/v1/notifications/shared", token=TOKEN)[0] == 204
        wait_for(lambda: replicas[0].get("/api/v1/notifications/shared")[0] == 404, timeout=5,
                 what="the removal on the first replica")
    finally:
        receiver.close()
