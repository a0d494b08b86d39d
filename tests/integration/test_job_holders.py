"""Three `trainwatch serve` replicas on one real PostgreSQL, started by the test, and one
job whose three nodes each report to a different replica, as a round-robin load balancer
would send them. Only the job's owner and its standby (rendezvous.py, holders_of) apply its
reports: the third hands its reports to them and answers the job's reads with theirs, and
the store is written far less often than reports arrive. When the owner is SIGKILLed, the
standby, which applied every report, names the same culprit at once: no false recovery,
no second incident."""
import re
import signal
import time

from conftest import Server, wait_for
from rendezvous import holders_of
from replica_probes import NodeAgent, all_see, health, job

TOKEN = "job-holders-token-0123456789"
JOB = "llama"


def counter(server, name):
    _, text, _ = server.get("/metrics")
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(found.group(1)) if found else None


def node_report_writes(postgres):
    return int(postgres.psql("SELECT n_tup_ins + n_tup_upd FROM pg_stat_user_tables WHERE relname = 'node_reports'"))


def test_only_a_jobs_owner_and_standby_apply_its_reports_and_the_standby_takes_over_whole(
        tmp_path, postgres, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    config = tmp_path / "trainwatch.yaml"
    config.write_text("store:\n  url: ${TRAINWATCH_STORE_URL}\njobs:\n  token: ${TRAINWATCH_TOKEN}\n"
                      f"monitors:\n  - {{name: {JOB}, type: job, world_size: 3}}\n")
    replicas = [Server(config, tmp_path / f"data-{i}", tmp_path / f"replica-{i}.log").start() for i in range(3)]
    agents = [NodeAgent(f"node-{i}", i, TOKEN, pid_base=5000) for i in range(3)]
    try:
        views = wait_for(lambda: all_see(replicas, 3), timeout=20, what="three replicas that see each other")
        by_id = {v["replicas"]["self"]: r for v, r in zip(views, replicas)}
        owner_id, standby_id = holders_of(JOB, views[0]["replicas"]["members"])
        owner, standby = by_id[owner_id], by_id[standby_id]
        (bystander,) = [r for r in replicas if r is not owner and r is not standby]
        # Each node reports to its own replica; the owner's node moves to the bystander
        # when the owner dies, as an agent behind a load balancer would.
        for agent, replica in zip(agents, [owner, standby, bystander]):
            agent.server, agent.fallback = replica, bystander
            agent.thread.start()

        for replica in replicas:
            wait_for(lambda r=replica: (j := job(r)) and len(j["nodes"]) == 3 and j["phase"] == "training",
                     timeout=15, what="the whole job through every replica")
        owner.wait_status(JOB, "up", timeout=10)
        writes_before = node_report_writes(postgres)
        applied_before = [counter(r, "trainwatch_job_reports_applied_total") for r in replicas]
        time.sleep(8)  # eight rounds of reports: real traffic, counted below
        reports = 8 * 3
        applied = [counter(r, "trainwatch_job_reports_applied_total") - b for r, b in zip(replicas, applied_before)]
        by_replica = dict(zip(["owner", "standby", "bystander"], [applied[replicas.index(r)]
                                                                  for r in (owner, standby, bystander)]))
        assert by_replica["bystander"] == 0, by_replica
        assert by_replica["owner"] >= reports - 3 and by_replica["standby"] >= reports - 3, by_replica
        assert counter(bystander, "trainwatch_job_reports_handed_on_total") >= 8
        assert node_report_writes(postgres) - writes_before < reports / 4, "the store written per report"

        # The bystander's reads are the owner's: the page and the API name all three nodes,
        # and every replica lists the job once, as its owner sees it.
        status, page, _ = bystander.get(f"/jobs/{JOB}")
        assert status == 200 and all(f"node-{i}" in page for i in range(3))
        assert all(n["last_seen_age_ms"] < 3000 for n in job(bystander)["nodes"]), job(bystander)["nodes"]
        for replica in replicas:
            listed = replica.get("/api/v1/jobs")[1]
            assert [(j["name"], j["phase"], j["nodes"]) for j in listed["jobs"]] == [(JOB, "training", 3)], listed
            assert "partial" not in listed
        status, page, _ = bystander.get("/jobs")
        assert status == 200 and f'href="/jobs/{JOB}"' in page

        agents[2].alive = False  # rank 2 dies; its node reports to the bystander
        down = owner.wait_status(JOB, "down", timeout=10)
        assert "rank 2" in down["last_error"], down
        culprit = job(owner)["cause"]
        assert "rank 2" in culprit
        wait_for(lambda: "rank 2" in ((job(standby) or {}).get("cause") or ""), timeout=5,
                 what="the standby naming the culprit too")
        standby.wait_status(JOB, "down", timeout=5)  # the owner's stored state, read at a beat

        owner.stop(signal.SIGKILL)
        statuses = []  # the job's status on the standby, every poll until its own first check

        def polled():
            m = standby.monitor(JOB)
            statuses.append(m["status"])
            return m

        wait_for(lambda: polled() and len(health(standby)["replicas"]["members"]) == 2, timeout=15, interval=0.2,
                 what="the killed owner to leave the members (6 s ttl)")
        since = polled()["last_check"]
        wait_for(lambda: polled()["last_check"] != since, timeout=10, interval=0.2,
                 what="the standby's own first check of the job")
        after = standby.monitor(JOB)
        assert after["status"] == "down" and "rank 2" in after["last_error"], after
        assert job(standby)["cause"] == culprit, "the same culprit, not one rebuilt from a blank state"
        assert len(job(standby)["nodes"]) == 3
        assert "up" not in statuses, statuses
        incidents = [i for i in standby.get("/api/v1/incidents")[1]["incidents"] if i["monitor"] == JOB]
        assert len(incidents) == 1 and incidents[0]["ended"] is None, incidents
    finally:
        for agent in agents:
            agent.stopped.set()
        for r in replicas:
            r.stop()
