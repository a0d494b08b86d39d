"""Uptime is time not DOWN: failed checks that stay below `retries` open no incident and take
no uptime, on the status page (its bars and percentage), in its JSON and on the badge."""
from conftest import wait_for


def config(port):
    return f"""
monitors:
  - name: trainer
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    retries: 5
status_pages:
  - slug: ml
    title: ML
    groups:
      - name: Training
        monitors: [trainer]
"""


def test_failed_start_up_checks_below_retries_leave_the_day_at_100_percent(start_server, health_target):
    health_target.degrade()  # the target is still starting
    server = start_server(config(health_target.port))
    wait_for(lambda: server.monitor("trainer")["consecutive_failures"] >= 2, what="two failed checks")
    health_target.recover()
    up = server.wait_status("trainer", "up")
    assert up["incident"] is None
    # Enough checks after the failures that any share of them would show.
    wait_for(lambda: len(server.get("/api/v1/monitors/trainer?limit=20")[1]["results"]) >= 10,
             what="ten checks")
    failed = [r for r in server.get("/api/v1/monitors/trainer?limit=50")[1]["results"] if not r["ok"]]
    assert len(failed) >= 2, failed

    status, page, _ = server.get("/api/v1/status/ml")
    assert status == 200, page
    trainer = page["groups"][0]["monitors"][0]
    today = trainer["days"][-1]
    assert (today["uptime"], today["level"], today["incidents"]) == (100.0, "ok", 0), today
    assert trainer["uptime_90d_text"] == "100.00%", trainer
    assert page["banner"]["code"] == "operational"
    html = server.get("/status/ml")[1]
    assert "100.00% uptime" in html and "All systems operational" in html
    assert ">100.00%<" in server.get("/badge/trainer/uptime-30d.svg")[1]


def test_an_outage_inside_a_maintenance_window_takes_no_uptime(start_server, health_target):
    # A window around now that covers the monitor, in the file as an operator writes one.
    server = start_server(config(health_target.port).replace("retries: 5", "retries: 0") + """
maintenance:
  - monitors: [trainer]
    start: 2020-01-01T00:00:00Z
    end: 2099-01-01T00:00:00Z
""")
    server.wait_status("trainer", "up")
    health_target.degrade()
    down = server.wait_status("trainer", "down")
    assert down["incident"] is not None  # the outage itself is recorded as it happened
    wait_for(lambda: sum(not r["ok"] for r in server.get("/api/v1/monitors/trainer?limit=50")[1]["results"]) >= 3,
             what="three failed checks while DOWN")
    health_target.recover()
    server.wait_status("trainer", "up")

    trainer = server.get("/api/v1/status/ml")[1]["groups"][0]["monitors"][0]
    assert (trainer["days"][-1]["uptime"], trainer["uptime_90d_text"]) == (100.0, "100.00%"), trainer
    assert ">100.00%<" in server.get("/badge/trainer/uptime-30d.svg")[1]
