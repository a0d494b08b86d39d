"""A status page's report, as the person who hands a month of a page's services on checks
it: each service's row is that service's own report, the page's availability is their mean
and what its status page showed, the downtime counts an outage of two services once, the
CSV has a row per service, and nothing the page does not show (a service it leaves out, a
value a target answered) is in it."""
import json
from datetime import datetime, timedelta, timezone

from selenium.webdriver.common.by import By

from conftest import wait_for
from test_monitor_report import OUTAGES, SEEDED_DAYS, seed_month
from test_web import browser, screenshot  # noqa: F401 (browser is a fixture)


# (days before today, minutes down), each beginning at 10:00 UTC: three days ago `store`
# was down inside gateway's 90 minutes.
STORE_OUTAGES = [(20, 45), (3, 15)]
SECRET = "tok-s3cret"


def start_with_a_page(start_server, health_target, tmp_path):
    """`gateway` and `store` on the status page `ml`, `vault` on none; SEEDED_DAYS of
    history each; returns the server and today's UTC midnight."""
    monitors = "".join(f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{health_target.port}/health
    interval: 1m""" for name in ("gateway", "store", "vault"))
    server = start_server(f"""
monitors:{monitors}
status_pages:
  - slug: ml
    title: ML
    groups:
      - name: Serving
        monitors: [gateway]
      - name: Data
        monitors: [store]
""")
    server.stop()
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    today_ms = int(today.timestamp() * 1000)
    db = tmp_path / "data" / "trainwatch.db"
    seed_month(db, today_ms)
    # What a target answered is marked in a stored cause; the public sees it redacted.
    seed_month(db, today_ms, "store", STORE_OUTAGES, first_id=10,
               cause=f"HTTP 503; [BODY].error == \x02{SECRET}\x03, expected none")
    seed_month(db, today_ms, "vault", [(5, 600)], first_id=20, cause="vault sealed")
    server.start()
    for name in ("gateway", "store", "vault"):
        server.wait_status(name, "up")
    return server, today


def test_a_page_report_is_its_services_reports_and_what_its_status_page_showed(
        start_server, health_target, tmp_path, browser):
    server, today = start_with_a_page(start_server, health_target, tmp_path)
    first = today - timedelta(days=SEEDED_DAYS)
    query = f"from={first:%Y-%m-%d}&to={today:%Y-%m-%d}&slo=99.9"

    status, report, _ = server.get(f"/api/v1/status/ml/report?{query}")
    assert status == 200, report
    assert report["status_page"] == "ml" and [m["monitor"] for m in report["monitors"]] == ["gateway", "store"]
    text = json.dumps(report)
    assert "vault" not in text and SECRET not in text, text

    # Each row is the monitor's own report, figure for figure.
    own = {}
    for row in report["monitors"]:
        status, own[row["monitor"]], _ = server.get(f"/api/v1/monitors/{row['monitor']}/report?{query}")
        assert status == 200
        for key in ("availability_percent", "slo_met", "downtime_s", "error_budget", "incident_count", "mttr_s",
                    "longest_outage_s"):
            assert row[key] == own[row["monitor"]][key], (row["monitor"], key)

    # And what the status page showed for those days (a check a minute: every day weighs the same).
    page = server.get("/api/v1/status/ml")[1]
    dates = {(first + timedelta(days=n)).strftime("%Y-%m-%d") for n in range(SEEDED_DAYS)}
    for group, row in zip(page["groups"], report["monitors"]):
        shown = [d["uptime"] for d in group["monitors"][0]["days"] if d["date"] in dates]
        assert len(shown) == SEEDED_DAYS and abs(sum(shown) / len(shown) - row["availability_percent"]) < 1e-9

    # The page: the mean of its services, the time any was down, every incident.
    mean = (own["gateway"]["availability_percent"] + own["store"]["availability_percent"]) / 2
    assert abs(report["availability_percent"] - mean) < 1e-9 and report["slo_met"] is False
    gateway_down, store_down = sum(m for _, m in OUTAGES), sum(m for _, m in STORE_OUTAGES)
    assert report["downtime_s"] == (gateway_down + store_down - 15) * 60, "store's 15 min lay inside gateway's 90"
    assert report["error_budget"]["used_s"] == (gateway_down + store_down) / 2 * 60
    assert report["error_budget"]["allowed_s"] == round(SEEDED_DAYS * 86_400 * 0.001, 3)
    assert report["incident_count"] == 5 and report["longest_outage_s"] == 90 * 60
    assert report["mttr_s"] == (gateway_down + store_down) * 60 / 5
    causes = [i["cause"] for i in report["incidents"] if i["monitor"] == "store"]
    assert causes == ["HTTP 503; [BODY].error == (redacted), expected none"] * 2, causes

    status, csv, headers = server.get(f"/api/v1/status/ml/report?{query}&format=csv")
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    rows = csv.strip().split("\n")
    assert rows[0] == ("monitor,checks,ok,availability_percent,downtime_s,error_budget_left_s,incidents,mttr_s,"
                       "longest_outage_s")
    checks = SEEDED_DAYS * 1440
    assert len(rows) == 3 and rows[1].startswith(f"gateway,{checks},{checks - gateway_down},")
    assert rows[2].startswith(f"store,{checks},{checks - store_down},{own['store']['availability_percent']:.4f},")

    for bad, word in (("from=2026-13-01", "'from'"), ("slo=0", "'slo'"), ("format=xml", "'format'")):
        status, problem, headers = server.get("/api/v1/status/ml/report?" + bad)
        assert status == 400 and headers["Content-Type"] == "application/problem+json", bad
        assert word in problem["detail"], problem
    assert server.get("/api/v1/status/nope/report")[0] == 404

    # The printable page, from the status page's link.
    browser.get(server.base + "/status/ml")
    browser.find_element(By.ID, "report-link").click()
    wait_for(lambda: browser.find_elements(By.ID, "report-form"), what="the page's report")
    browser.get(server.base + f"/status/ml/report?{query}")
    assert browser.find_element(By.ID, "report-availability").text == f"{int(mean * 100) / 100:.2f}%"
    assert browser.find_element(By.ID, "report-verdict").text == "missed"
    assert browser.find_element(By.ID, "report-downtime").text == "2 h 52 min"
    services = browser.find_elements(By.CSS_SELECTOR, "#report-monitors tbody tr")
    assert [r.get_attribute("data-monitor") for r in services] == ["gateway", "store"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#report-incident-rows tbody tr")) == 5
    assert "vault" not in browser.page_source and SECRET not in browser.page_source
    screenshot(browser, "status-report-month")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert not browser.find_element(By.ID, "report-form").is_displayed()
    assert browser.find_element(By.ID, "report-monitors").is_displayed()
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})

    browser.get(server.base + "/status/ml/report?slo=abc")
    assert "'slo' is 'abc'" in browser.find_element(By.ID, "report-error").text
