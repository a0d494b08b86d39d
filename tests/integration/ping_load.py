"""Heartbeat pings under load, for the tests that crash or break the store under it:
`pingers` threads each send numbered pings (the body names the ping) over keep-alive
connections, bounded in count and time, and record every answer; then what SQLite holds.
"""
import http.client
import sqlite3
import threading
import time
import urllib.parse


class PingLoad:
    # `pause`: seconds each pinger waits after an answer (0: none), to stay under the
    # per-URL rate limit (heartbeat/rate_limiter.h: a burst of 1,000, then 200 a second),
    # whose 429s would otherwise mix with the answers a test is about.
    def __init__(self, server, token, pingers, max_per_pinger, seconds, pause=0.0):
        self.url = urllib.parse.urlsplit(server.base)
        self.token = token
        self.max_per_pinger = max_per_pinger
        self.pause = pause
        self.deadline = time.monotonic() + seconds
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._answers = []  # (sent at, HTTP status, body)
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(pingers)]
        for t in self.threads:
            t.start()

    def _run(self, n):
        conn = None
        for i in range(self.max_per_pinger):
            if self.stopping.is_set() or time.monotonic() > self.deadline:
                return
            body = f"pinger {n} ping {i}"
            sent = time.monotonic()
            try:
                conn = conn or http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=10)
                conn.request("POST", f"/ping/{self.token}", body=body)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                return  # the server is gone: what was answered before is what counts
            with self.lock:
                self._answers.append((sent, response.status, body))
            if self.pause:
                self.stopping.wait(self.pause)

    def answers(self):
        with self.lock:
            return list(self._answers)

    def acked(self):
        """The bodies of the pings answered 200."""
        return [body for _, status, body in self.answers() if status == 200]

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=20)


def stored_ping_bodies(db_path, monitor):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return {row[0] for row in db.execute("SELECT body FROM heartbeat_pings WHERE monitor = ?", (monitor,))}
    finally:
        db.close()
