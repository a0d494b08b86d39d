"""Real receivers on loopback for alert tests: one HTTP receiver standing in for Slack,
Discord, PagerDuty, Alertmanager, ntfy, Telegram and generic webhooks, and a real SMTP
server (aiosmtpd). Tests script the HTTP receiver's answers (status, Retry-After, a hang)
and read what arrived."""
import email
import email.policy
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class HttpReceiver:
    """Records every POST: (path, headers, parsed JSON or raw text). Answers 200 unless a
    test queues other answers with `answer()` or sets `hang`."""

    def __init__(self, port=0):
        self.requests = []
        self.lock = threading.Lock()
        self.script = []        # (status, headers) answers to give first, in order
        self.hang = None        # threading.Event: hold requests until it is set
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if receiver.hang is not None:
                    receiver.hang.wait(60)
                with receiver.lock:
                    status, headers = receiver.script.pop(0) if receiver.script else (200, {})
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = raw.decode(errors="replace")
                    receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                              "raw": raw, "status": status, "at": time.monotonic()})
                payload = b'{"ok":true}' if status < 300 else b'{"error":"scripted"}'
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, status, headers=None, times=1):
        with self.lock:
            self.script.extend([(status, headers or {})] * times)

    def accepted(self, path=None):
        """Requests answered 2xx, optionally only those to `path`."""
        with self.lock:
            return [r for r in self.requests if r["status"] < 300 and (path is None or r["path"] == path)]

    def all(self, path=None):
        with self.lock:
            return [r for r in self.requests if path is None or r["path"] == path]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class SmtpReceiver:
    """aiosmtpd on loopback; `messages` holds each (envelope recipients, parsed message)."""

    def __init__(self, username=None, password=None):
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        self.messages = []
        receiver = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                message = email.message_from_bytes(envelope.content, policy=email.policy.default)
                receiver.messages.append((list(envelope.rcpt_tos), envelope.mail_from, message))
                return "250 OK"

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = auth_data.login.decode() == username and auth_data.password.decode() == password
            return AuthResult(success=ok)

        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        kwargs = {}
        if username is not None:
            kwargs = dict(authenticator=authenticator, auth_require_tls=False)
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, **kwargs)
        self.controller.start()

    def close(self):
        self.controller.stop()


class HoldingReceiver:
    """A webhook receiver for an alert in flight when its sender dies: it keeps the first
    `hold` requests (every one when None) open without answering until `release` is set,
    answers the rest at once, and records every arrival as it comes."""

    def __init__(self, hold=None):
        self.arrived = []  # {"at": monotonic, "headers": {...}, "body": parsed JSON}
        self.lock = threading.Lock()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.arrived.append({"at": time.monotonic(), "headers": dict(self.headers),
                                             "body": json.loads(raw)})
                    held = hold is None or len(receiver.arrived) <= hold
                if held:
                    receiver.release.wait(60)
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # its sender was killed meanwhile

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def arrivals(self, event=None):
        """What arrived, oldest first; with `event`, only alerts of that event ("down")."""
        with self.lock:
            return [r for r in self.arrived if event is None or r["body"].get("event") == event]

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
