"""A failover to a real streaming standby (docs/operations.md, "Standbys and failover"):
a PostgreSQL primary with a hot standby made by pg_basebackup, replicating synchronously
(synchronous_standby_names = '*'), and `trainwatch serve` on a multi-host store.url with
target_session_attrs=read-write. Under a ping load the primary crashes (stop -m immediate)
and the standby is promoted: every ping trainwatch answered 200 is in the promoted
database, and writes come back within 10 s of the promotion."""
import shutil
import subprocess
import tempfile
import pathlib
import time

from conftest import PASSWORD, PG_BIN, Postgres, Server, loopback_port, wait_for
from ping_load import PingLoad

TOKEN = "standby-failover-token-0123456789"
WRITES_BACK_S = 10.0


class Standby:
    """A hot standby of `primary`, streaming from it, in a temp dir of its own."""

    def __init__(self, primary):
        self.primary = primary
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="tw-pg-standby-"))
        subprocess.run(["chown", "postgres", str(self.dir)], check=True)
        self.port = loopback_port()
        # -R writes primary_conninfo and standby.signal; through the primary's socket dir.
        primary.as_postgres([str(PG_BIN / "pg_basebackup"), "-D", str(self.dir / "data"), "-R", "-X", "stream",
                             "-h", str(primary.dir), "-p", str(primary.port), "-U", "postgres",
                             "--no-sync", "-c", "fast"])
        self.ctl("start", "-w", "-l", str(self.dir / "log"), "-o",
                 f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}")

    def ctl(self, *args):
        return self.primary.as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), *args])

    def psql(self, sql):
        return self.primary.as_postgres(["psql", "-h", str(self.dir), "-p", str(self.port), "-U", "postgres",
                                         "-d", "trainwatch", "-q", "-At", "-c", sql])

    def discard(self):
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"),
                        "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def test_a_failover_to_a_synchronous_standby_loses_no_acknowledged_ping(tmp_path, postgres, monkeypatch):
    primary: Postgres = postgres
    standby = Standby(primary)
    server = None
    load = None
    try:
        primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'", database="postgres")
        primary.psql("SELECT pg_reload_conf()", database="postgres")
        wait_for(lambda: primary.psql("SELECT sync_state FROM pg_stat_replication", database="postgres").strip()
                 == "sync", timeout=15, what="the standby replicating synchronously")

        # The url of docs/operations.md: both hosts, and only the one that takes writes.
        monkeypatch.setenv("TRAINWATCH_STORE_URL",
                           f"postgresql://postgres:{PASSWORD}@/trainwatch?host=127.0.0.1,127.0.0.1"
                           f"&port={primary.port},{standby.port}&target_session_attrs=read-write&sslmode=disable")
        config = tmp_path / "trainwatch.yaml"
        config.write_text(f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
monitors:
  - {{name: backups, type: heartbeat, period: 1h, token: {TOKEN}}}
""")
        server = Server(config, tmp_path / "data", tmp_path / "serve.log").start()
        load = PingLoad(server, TOKEN, pingers=4, max_per_pinger=100_000, seconds=120, pause=0.02)
        wait_for(lambda: len(load.acked()) >= 200, timeout=30, what="pings acknowledged before the failover")

        primary.stop("immediate")  # the primary's host dies
        standby.ctl("promote", "-w")
        promoted = time.monotonic()
        back = wait_for(lambda: [sent for sent, status, _ in load.answers() if status == 200 and sent > promoted],
                        timeout=30, what="a ping acknowledged by the promoted standby")
        writes_back = back[0] - promoted
        acked_after = len(back)
        wait_for(lambda: len([1 for sent, status, _ in load.answers() if status == 200 and sent > promoted])
                 >= acked_after + 200, timeout=30, what="pings acknowledged after the failover")
        load.stop()

        acked = load.acked()
        stored = set(standby.psql("SELECT body FROM heartbeat_pings WHERE monitor = 'backups'").splitlines())
        lost = [body for body in acked if body not in stored]
        refused = sum(1 for _, status, _ in load.answers() if status != 200)
        print(f"standby failover: {len(acked)} acknowledged pings, {len(lost)} lost, {refused} refused "
              f"meanwhile (503), writes back {writes_back:.1f} s after the promotion")
        assert not lost, f"{len(lost)} acknowledged ping(s) are not in the promoted database: {lost[:5]}"
        assert writes_back <= WRITES_BACK_S
    finally:
        if load is not None:
            load.stop()
        if server is not None:
            server.stop()
        standby.discard()
