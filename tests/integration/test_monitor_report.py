"""A monitor's report, as the person who hands it to a manager checks it: over a month of
stored history, each day's availability is what the status page shows for that day, the
downtime is the incidents' to the second, and the error budget is what is left of the
SLO's; the CSV has a row per day; a bad range is a problem+json naming the parameter."""
import sqlite3
from datetime import datetime, timedelta, timezone

from selenium.webdriver.common.by import By

from conftest import wait_for
from test_web import browser, screenshot  # noqa: F401 (browser is a fixture)


DAY, MINUTE = 86_400_000, 60_000
# (days before today, minutes down): each outage a stored incident and its failed checks.
OUTAGES = [(25, 30), (12, 7), (3, 90)]
SEEDED_DAYS = 28


def seed_month(db_path, today_ms, monitor="gateway", outages=OUTAGES, first_id=1, cause="HTTP 503"):
    """A check a minute of `monitor` for SEEDED_DAYS whole days before today, as the server
    stores them: daily rollups and the incidents (numbered from `first_id`), each beginning
    at 10:00 UTC."""
    db = sqlite3.connect(db_path)
    with db:
        for back in range(1, SEEDED_DAYS + 1):
            down = dict(outages).get(back, 0)
            db.execute("INSERT INTO uptime_daily (monitor, start_ms, checks, ok, latency_sum_ms) "
                       "VALUES (?, ?, 1440, ?, 0)", (monitor, today_ms - back * DAY, 1440 - down))
        for number, (back, down) in enumerate(outages, start=first_id):
            started = today_ms - back * DAY + 10 * 60 * MINUTE
            db.execute("INSERT INTO incidents (id, monitor, started_ms, ended_ms, cause) VALUES (?, ?, ?, ?, ?)",
                       (number, monitor, started, started + down * MINUTE, cause))
    db.close()


def start_with_a_month(start_server, health_target, tmp_path, more=""):
    """The server with `gateway` checked every minute and SEEDED_DAYS of its history, up;
    returns it and today's UTC midnight."""
    server = start_server(f"""
monitors:
  - name: gateway
    type: http
    url: http://127.0.0.1:{health_target.port}/health
    interval: 1m
{more}""")
    server.stop()
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    seed_month(tmp_path / "data" / "trainwatch.db", int(today.timestamp() * 1000))
    server.start()
    server.wait_status("gateway", "up")
    return server, today


def test_a_month_report_agrees_with_the_status_page(start_server, health_target, tmp_path):
    server, today = start_with_a_month(start_server, health_target, tmp_path, """
status_pages:
  - slug: ml
    title: ML
    groups:
      - name: Serving
        monitors: [gateway]
""")

    first = (today - timedelta(days=SEEDED_DAYS)).strftime("%Y-%m-%d")
    query = f"/api/v1/monitors/gateway/report?from={first}&to={today.strftime('%Y-%m-%d')}&slo=99.9"
    status, report, _ = server.get(query)
    assert status == 200, report
    assert report["incident_count"] == 3 and [i["id"] for i in report["incidents"]] == [1, 2, 3]
    down_s = sum(m for _, m in OUTAGES) * 60
    assert report["downtime_s"] == down_s
    assert report["longest_outage_s"] == 90 * 60 and report["mttr_s"] == down_s / 3
    checks = SEEDED_DAYS * 1440
    assert report["availability_percent"] == 100.0 * (checks - down_s / 60) / checks
    # Each failed check stands for its minute: the downtime the availability says, to the second.
    assert round((100 - report["availability_percent"]) / 100 * checks * 60) == down_s
    budget = report["error_budget"]
    assert budget["allowed_s"] == round(SEEDED_DAYS * 86_400 * 0.001, 3)
    assert budget["left_s"] == round(budget["allowed_s"] - down_s, 3) and report["slo_met"] is False

    # Day by day, the figures the status page shows for the same days.
    page = server.get("/api/v1/status/ml")[1]
    shown = {d["date"]: d["uptime"] for d in page["groups"][0]["monitors"][0]["days"]}
    assert len(report["days"]) == SEEDED_DAYS
    for day in report["days"]:
        assert day["availability_percent"] == shown[day["date"]], day
    outage_day = (today - timedelta(days=3)).strftime("%Y-%m-%d")
    assert next(d for d in report["days"] if d["date"] == outage_day)["downtime_s"] == 90 * 60

    status, csv, headers = server.get(query + "&format=csv")
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    rows = csv.strip().split("\n")
    assert rows[0] == "date,checks,ok,availability_percent,downtime_s,incidents" and len(rows) == SEEDED_DAYS + 1
    assert f"{outage_day},1440,1350,93.7500,5400.000,1" in rows

    # This month so far by default; a bad parameter names itself.
    status, current, _ = server.get("/api/v1/monitors/gateway/report")
    assert status == 200 and current["from"] == today.replace(day=1).strftime("%Y-%m-%dT00:00:00.000Z")
    for bad, word in (("from=2026-13-01", "'from'"), ("slo=100", "'slo'"), ("from=2026-01-02&to=2026-01-01", "range"),
                      ("format=xml", "'format'")):
        status, problem, headers = server.get("/api/v1/monitors/gateway/report?" + bad)
        assert status == 400 and headers["Content-Type"] == "application/problem+json", bad
        assert word in problem["detail"], problem
    assert server.get("/api/v1/monitors/nope/report")[0] == 404


def test_the_report_page_prints_the_figures_and_names_a_bad_range(start_server, health_target, tmp_path, browser):
    server, today = start_with_a_month(start_server, health_target, tmp_path)

    browser.get(server.base + "/monitors/gateway")
    browser.find_element(By.ID, "report-link").click()
    wait_for(lambda: browser.find_elements(By.ID, "report-form"), what="the report page")
    browser.get(server.base + f"/monitors/gateway/report?from={(today - timedelta(days=SEEDED_DAYS)):%Y-%m-%d}"
                f"&to={today:%Y-%m-%d}&slo=99.5")
    down_minutes = sum(m for _, m in OUTAGES)
    shown = 100.0 * (SEEDED_DAYS * 1440 - down_minutes) / (SEEDED_DAYS * 1440)
    assert browser.find_element(By.ID, "report-availability").text == f"{int(shown * 100) / 100:.2f}%"
    assert browser.find_element(By.ID, "report-verdict").text == "met"
    assert browser.find_element(By.ID, "report-downtime").text == "2 h 7 min"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#report-incident-rows tbody tr")) == 3
    outage_day = (today - timedelta(days=3)).strftime("%Y-%m-%d")
    row = browser.find_element(By.CSS_SELECTOR, f"#report-days tr[data-date='{outage_day}']").text
    assert "93.75%" in row and "1 h 30 min" in row, row
    screenshot(browser, "report-month")
    # On paper: the figures and tables, without the dashboard's header or the range form.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert not browser.find_element(By.CSS_SELECTOR, "header.top").is_displayed()
    assert not browser.find_element(By.ID, "report-form").is_displayed()
    assert browser.find_element(By.ID, "report-days").is_displayed()
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    # And on a phone, without a horizontal scroll.
    browser.set_window_size(390, 844)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
    screenshot(browser, "report-phone")

    browser.get(server.base + "/monitors/gateway/report?from=2026-02-30")
    assert "'from' is '2026-02-30'; expected a date" in browser.find_element(By.ID, "report-error").text


def test_a_report_shows_an_outage_that_began_a_moment_ago(start_server, health_target):
    """Reports are read once a minute at most, for every reader at once; a monitor going
    down shows in the next one all the same."""
    server = start_server(f"""
monitors:
  - name: gateway
    type: http
    url: http://127.0.0.1:{health_target.port}/health
    interval: 200ms
    timeout: 1s
    conditions: ["[STATUS] == 200", "[BODY].status == ok"]
""")
    started = datetime.now(timezone.utc)
    server.wait_status("gateway", "up")
    before = server.get("/api/v1/monitors/gateway/report")[1]
    assert before["incident_count"] == 0
    # Watched for seconds, not since the 1st: its budget is 0.1 % of those seconds.
    watched_from = datetime.fromisoformat(before["watched_from"].replace("Z", "+00:00"))
    assert abs((watched_from - started).total_seconds()) < 30, before["watched_from"]
    assert before["error_budget"]["allowed_s"] < 1, before["error_budget"]
    health_target.degrade()
    server.wait_status("gateway", "down")
    after = server.get("/api/v1/monitors/gateway/report")[1]
    assert after["incident_count"] == 1 and after["incidents"][0]["ended"] is None, after
    page = server.get("/monitors/gateway/report")[1]
    assert "ongoing" in page
    # One incident, not ended: said so, not a "mean time to recovery" of none.
    assert "incident, none ended yet; the longest has lasted" in page and "recovery none" not in page
