"""Incident updates and status-page announcements: the real binary, a real SQLite file, a
real health target on loopback, and one Chromium check of the dashboard form and banner."""
import re
from datetime import datetime, timedelta, timezone

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import api_call, wait_for
from test_web import XSS, browser, http_monitor, login, screenshot  # noqa: F401 (browser is a fixture)

TOKEN = "web-test-admin-token-0123456789"  # test_web's login() uses this one
ALLOWED = "investigating, identified, monitoring, resolved"


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def config(port):
    now = datetime.now(timezone.utc)
    return f"""
monitors:{http_monitor("trainer", port)}
status_pages:
  - slug: ml
    title: ML training
    groups:
      - {{name: Training, monitors: [trainer]}}
    announcements:
      - title: "Cluster upgrade {XSS}"
        text: "Jobs pause between 02:00 and 04:00."
        from: {rfc3339(now - timedelta(hours=1))}
        until: {rfc3339(now + timedelta(hours=1))}
        severity: warning
      - {{title: Next week's upgrade, from: {rfc3339(now + timedelta(hours=1))}, until: {rfc3339(now + timedelta(hours=2))}}}
      - {{title: Last month's upgrade, from: {rfc3339(now - timedelta(days=30))}, until: {rfc3339(now - timedelta(days=29))}}}
auth:
  admin_tokens: ["{TOKEN}"]
"""


def open_incident(server, health_target):
    server.wait_status("trainer", "up")
    health_target.degrade()
    server.wait_status("trainer", "down")
    incidents = wait_for(lambda: server.get("/api/v1/incidents?monitor=trainer")[1]["incidents"],
                         what="the incident")
    return incidents[0]["id"]


def post(server, incident, body, token=TOKEN, raw=None):
    return api_call(server, "POST", f"/api/v1/incidents/{incident}/updates", body, token, raw)


def page_text(html):
    return re.sub(r"<[^>]+>", "", html)


def test_updates_are_posted_read_back_and_shown_escaped_on_the_status_page(start_server, health_target):
    server = start_server(config(health_target.port))
    incident = open_incident(server, health_target)

    status, problem, headers = post(server, incident, {"status": "investigating", "text": "x"}, token=None)
    assert status == 401 and "editor role" in problem["detail"]
    assert headers["Content-Type"].startswith("application/problem+json")
    status, _, _ = post(server, incident, {"status": "investigating", "text": "x"}, token="wrong-token-000000000")
    assert status == 401
    status, problem, _ = post(server, incident, {"status": "fixed", "text": "x"})
    assert status == 400 and ALLOWED in problem["detail"], problem
    status, problem, _ = post(server, incident, {"status": "monitoring", "text": "y" * 4097})
    assert status == 400 and "at most 4096" in problem["detail"], problem
    status, problem, _ = post(server, incident, None, raw="{not json")
    assert status == 400
    status, problem, _ = post(server, 999999, {"status": "investigating", "text": "x"})
    assert status == 404 and "no incident" in problem["detail"], problem
    assert server.get(f"/api/v1/incidents/{incident}")[1]["updates"] == [], "nothing refused was stored"

    status, created, headers = post(server, incident, {"status": "investigating", "text": XSS})
    assert status == 201, created
    assert created["status"] == "investigating" and created["text"] == XSS
    assert headers["Location"] == f"/api/v1/incidents/{incident}"
    health_target.recover()
    server.wait_status("trainer", "up")
    status, _, _ = post(server, incident, {"status": "resolved", "text": "Back & fine"})
    assert status == 201, "a closed incident takes updates too"

    status, body, _ = server.get(f"/api/v1/incidents/{incident}")
    assert status == 200
    assert body["id"] == incident and body["monitor"] == "trainer" and body["ended"]
    assert [(u["status"], u["text"]) for u in body["updates"]] == [("investigating", XSS), ("resolved", "Back & fine")]
    assert body["updates"][0]["at"] <= body["updates"][1]["at"]
    assert server.get("/api/v1/incidents/12345")[0] == 404

    # The page is rebuilt at most every few seconds: poll until the updates are on it.
    html = wait_for(lambda: (h := server.get("/status/ml")[1]) and "Back &amp; fine" in h and h,
                    timeout=20, interval=0.5, what="the updates on the status page")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert XSS not in html, "posted text must never become markup"
    text = page_text(html)
    assert text.index("Resolved") < text.index("Investigating"), "the newest update comes first"
    model = server.get("/api/v1/status/ml")[1]
    listed = model["incident_days"][0]["incidents"][0]
    assert [u["status"] for u in listed["updates"]] == ["resolved", "investigating"]


def test_an_announcement_shows_only_inside_its_window(start_server, health_target):
    server = start_server(config(health_target.port))
    status, html, _ = server.get("/status/ml")
    assert status == 200
    assert "announcement-warning" in html
    assert "Cluster upgrade &lt;script&gt;" in html and XSS not in html
    assert "Jobs pause between 02:00 and 04:00." in html
    assert "Next week" not in html and "Last month" not in html
    model = server.get("/api/v1/status/ml")[1]
    assert [a["title"] for a in model["announcements"]] == [f"Cluster upgrade {XSS}"]


def test_a_bad_announcement_fails_the_config_check_with_its_place(tmp_path):
    import subprocess
    from conftest import BINARY
    path = tmp_path / "bad.yaml"
    path.write_text("""monitors:
  - {name: t, type: tcp, host: 127.0.0.1, port: 1}
status_pages:
  - slug: ml
    title: ML
    announcements:
      - {title: Upgrade, from: "2026-05-01T02:00:00Z", until: "soon"}
""")
    result = subprocess.run([BINARY, "check", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert f"{path}:7:" in result.stderr + result.stdout
    assert "announcements[0].until: found 'soon'" in result.stderr + result.stdout


def test_the_dashboard_posts_an_update_and_the_status_page_shows_the_banner(start_server, health_target, browser):
    server = start_server(config(health_target.port))
    incident = open_incident(server, health_target)
    login(browser, server)
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the logout button")
    browser.get(f"{server.base}/monitors/trainer")
    item = browser.find_element(By.ID, f"incident-{incident}")
    item.find_element(By.TAG_NAME, "summary").click()
    Select(item.find_element(By.NAME, "status")).select_by_value("identified")
    item.find_element(By.NAME, "text").send_keys("Rank 3's node lost its disk")
    item.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(lambda: "Rank 3's node lost its disk" in browser.page_source, what="the posted update")
    assert browser.find_element(By.CSS_SELECTOR, f"#incident-{incident} .update-identified").is_displayed()
    screenshot(browser, "incident-update-posted")

    browser.get(f"{server.base}/status/ml")
    banner = browser.find_element(By.CSS_SELECTOR, ".announcement-warning")
    assert banner.is_displayed() and f"Cluster upgrade {XSS}" in banner.text
    screenshot(browser, "status-page-announcement")
