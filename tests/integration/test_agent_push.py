"""The agent's report pusher over HTTPS: a real TLS receiver on loopback with a
self-signed certificate for `localhost`, trusted through OpenSSL's SSL_CERT_FILE."""
import json
import os
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import BINARY, wait_for


class TlsReceiver:
    def __init__(self, tmp):
        self.cert, key = tmp / "cert.pem", tmp / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(self.cert)],
                       check=True, capture_output=True)
        self.reports = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.reports.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                         "body": json.loads(body)})
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(self.cert), str(key))
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver(tmp_path):
    r = TlsReceiver(tmp_path)
    yield r
    r.close()


def start_agent(tmp_path, port, extra_env):
    env = dict(os.environ, TRAINWATCH_TOKEN="push-token", **extra_env)
    log = tmp_path / "agent.log"
    agent = subprocess.Popen([BINARY, "agent", "--job", "tls", "--listen", "127.0.0.1:0", "--dir", str(tmp_path / "slots"),
                              "--server", f"https://localhost:{port}", "--report-every", "0.2", "--node", "node-t"],
                             env=env, stderr=open(log, "wb"))
    return agent, log


def test_reports_go_over_https_to_a_trusted_server(tmp_path, receiver):
    agent, _ = start_agent(tmp_path, receiver.port, {"SSL_CERT_FILE": str(receiver.cert)})
    try:
        report = wait_for(lambda: receiver.reports, what="a node report over TLS")[0]
        assert report["path"] == "/api/v1/jobs/tls/report"
        assert report["auth"] == "Bearer push-token"
        assert report["body"]["node"] == "node-t"
    finally:
        agent.terminate()
        agent.wait()


def test_an_untrusted_certificate_is_refused_and_said(tmp_path, receiver):
    # The system's store does not know this self-signed certificate.
    agent, log = start_agent(tmp_path, receiver.port, {"SSL_CERT_DIR": str(tmp_path), "SSL_CERT_FILE": "/nonexistent"})
    try:
        wait_for(lambda: "failed" in log.read_text(), what="the agent to say its report failed")
        assert "certificate verify failed" in log.read_text(), log.read_text()
        assert receiver.reports == []
    finally:
        agent.terminate()
        agent.wait()
