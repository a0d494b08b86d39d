"""TLS certificate checks end to end: certificates made by the `openssl` command under a
test CA, served by small Python TLS servers on loopback, checked by the real binary through
`type: tls` monitors and an https monitor's [CERTIFICATE_EXPIRATION] condition."""
import datetime
import os
import re
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import wait_for
from receivers import HttpReceiver

CA_CONFIG = """[ca]
default_ca = test_ca
[test_ca]
dir = {dir}
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
certificate = $dir/ca.pem
private_key = $dir/ca.key
default_md = sha256
policy = anything
unique_subject = no
copy_extensions = none
[anything]
commonName = supplied
[leaf]
basicConstraints = CA:FALSE
subjectAltName = $ENV::SAN
"""
EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


class LocalCa:
    """A CA in a temp dir that signs leaf certificates for any validity period, past ones
    included (`openssl ca -startdate/-enddate`: OpenSSL 3.0's x509 cannot set them)."""

    def __init__(self, directory):
        self.dir = directory
        (directory / "index.txt").write_text("")
        (directory / "serial").write_text("1000\n")
        (directory / "ca.cnf").write_text(CA_CONFIG.format(dir=directory))
        self.openssl("req", "-x509", *EC_KEY, "-keyout", "ca.key", "-out", "ca.pem", "-days", "3650",
                     "-subj", "/CN=trainwatch test CA")
        self.pem = directory / "ca.pem"

    def openssl(self, *args, env=None):
        subprocess.run(["openssl", *args], cwd=self.dir, check=True, capture_output=True, timeout=60,
                       env=dict(os.environ, **(env or {})))

    def leaf(self, name, host, not_before, not_after):
        """(cert, key) for `host`; dates as datetimes or openssl's YYYYMMDDHHMMSSZ text."""
        stamp = lambda t: t if isinstance(t, str) else t.strftime("%Y%m%d%H%M%SZ")
        self.openssl("req", *EC_KEY, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={host}")
        self.openssl("ca", "-batch", "-config", "ca.cnf", "-extensions", "leaf", "-notext",
                     "-startdate", stamp(not_before), "-enddate", stamp(not_after),
                     "-in", f"{name}.csr", "-out", f"{name}.pem", env={"SAN": f"DNS:{host}"})
        return self.dir / f"{name}.pem", self.dir / f"{name}.key"

    def self_signed(self, name, host):
        self.openssl("req", "-x509", *EC_KEY, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "90",
                     "-subj", f"/CN={host}", "-addext", f"subjectAltName=DNS:{host}")
        return self.dir / f"{name}.pem", self.dir / f"{name}.key"


class TlsServer(ThreadingHTTPServer):
    """HTTPS on 127.0.0.1, port 0, serving one certificate. The handshake runs in the
    request's thread, so a client that leaves right after it (the tls check) blocks nothing."""

    daemon_threads = True

    def __init__(self, cert, key):
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def finish_request(self, request, client_address):
        try:
            request = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        pass  # a check that closes after the handshake is no error worth a traceback


@pytest.fixture
def certificates(tmp_path):
    """Each kind of certificate the tests need, served on its own port: name -> port."""
    ca = LocalCa(tmp_path)
    now = datetime.datetime.now(datetime.timezone.utc)
    day = datetime.timedelta(days=1)
    made = {
        "valid": ca.leaf("valid", "localhost", now - day, now + 90 * day),
        # Half an hour short of 3 days, so that the days left read 2 however fast the check runs.
        "soon": ca.leaf("soon", "localhost", now - day, now + 3 * day - datetime.timedelta(minutes=30)),
        "expired": ca.leaf("expired", "localhost", now - 30 * day, now - 2 * day),
        "wrong-host": ca.leaf("wrong", "other.test", now - day, now + 90 * day),
        "self-signed": ca.self_signed("self", "localhost"),
        "forever": ca.leaf("forever", "localhost", now - day, "99991231235959Z"),
        "inverted": ca.leaf("inverted", "localhost", "20250101000000Z", "20240101000000Z"),
    }
    servers = {name: TlsServer(*files) for name, files in made.items()}
    yield ca, {name: server.port for name, server in servers.items()}
    for server in servers.values():
        server.shutdown()
        server.server_close()


def tls_monitor(name, port, ca_file, extra=""):
    return f"""
  - name: {name}
    type: tls
    host: 127.0.0.1
    port: {port}
    server_name: localhost
    ca_file: {ca_file}
    interval: 500ms
    timeout: 5s
{extra}"""


def test_tls_monitors_name_what_is_wrong_with_each_certificate(start_server, certificates):
    ca, ports = certificates
    receiver = HttpReceiver()
    try:
        monitors = "".join([
            tls_monitor("valid", ports["valid"], ca.pem),
            tls_monitor("soon-warns", ports["soon"], ca.pem, "    warn_before: 14d\n    down_before: 1d\n"
                        "    notify: [hook, pager]\n"),
            tls_monitor("soon-down", ports["soon"], ca.pem, "    warn_before: 14d\n    down_before: 3d\n"),
            tls_monitor("expired", ports["expired"], ca.pem),
            tls_monitor("wrong-host", ports["wrong-host"], ca.pem),
            tls_monitor("self-signed", ports["self-signed"], ca.pem),
            tls_monitor("forever", ports["forever"], ca.pem),
            tls_monitor("inverted", ports["inverted"], ca.pem),
            tls_monitor("missing-ca", ports["valid"], ca.dir / "no-such-ca.pem"),
        ])
        server = start_server(f"""monitors:{monitors}
  - name: https-long
    type: http
    url: https://127.0.0.1:{ports["valid"]}/
    tls_verify: false
    interval: 500ms
    timeout: 5s
    conditions: ["[STATUS] == 200", "[CERTIFICATE_EXPIRATION] > 168h"]
  - name: https-short
    type: http
    url: https://127.0.0.1:{ports["soon"]}/
    tls_verify: false
    interval: 500ms
    timeout: 5s
    conditions: ["[STATUS] == 200", "[CERTIFICATE_EXPIRATION] > 168h"]
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook"}}
  - {{name: pager, type: pagerduty, routing_key: k, url: "{receiver.base}/pd"}}
""")
        valid = server.wait_status("valid", "up", timeout=30)
        assert re.fullmatch(r"certificate for localhost expires in (89|90) days \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)",
                            valid["last_result"]["cause"]), valid["last_result"]
        assert valid["last_error"] is None

        warns = server.wait_status("soon-warns", "up", timeout=30)
        assert re.fullmatch(r"certificate for localhost expires in 2 days \(.*Z\)", warns["last_result"]["cause"])
        down = server.wait_status("soon-down", "down", timeout=30)
        assert re.fullmatch(r"certificate for localhost expires in 2 days \(.*Z\)", down["last_error"])

        expired = server.wait_status("expired", "down", timeout=30)
        assert re.fullmatch(r"certificate has expired \(.*Z, 2 days ago\)", expired["last_error"])
        assert server.wait_status("wrong-host", "down")["last_error"] == \
            "host name mismatch: certificate is for other.test"
        assert server.wait_status("self-signed", "down")["last_error"] == "self-signed certificate"
        forever = server.wait_status("forever", "up")
        assert forever["last_result"]["cause"] == \
            "certificate for localhost has no expiry date (notAfter 9999-12-31T23:59:59Z)"
        assert server.wait_status("inverted", "down")["last_error"] == (
            "certificate dates are inverted: notAfter 2024-01-01T00:00:00Z is before notBefore 2025-01-01T00:00:00Z")
        missing = server.wait_status("missing-ca", "down")
        assert missing["last_error"].startswith(f"ca_file {ca.dir / 'no-such-ca.pem'}: cannot be read")

        server.wait_status("https-long", "up")
        short = server.wait_status("https-short", "down")
        assert re.fullmatch(r"\[CERTIFICATE_EXPIRATION\] == 2d 23h, expected > 168h", short["last_error"]), short

        # The warning reaches the webhook once, and never the pager.
        [warning] = wait_for(lambda: receiver.accepted("/hook"), what="the warning on the webhook")
        assert warning["body"]["event"] == "warning"
        assert warning["body"]["state"] == "up"
        assert warning["body"]["monitor"]["name"] == "soon-warns"
        assert re.fullmatch(r"certificate for localhost expires in 2 days \(.*Z\)", warning["body"]["cause"])
        checks_after = server.monitor("soon-warns")["last_check"]
        wait_for(lambda: server.monitor("soon-warns")["last_check"] > checks_after, what="another check")
        wait_for(lambda: server.monitor("soon-warns")["last_check"] > checks_after, what="one more check")
        assert len(receiver.accepted("/hook")) == 1
        assert [r for r in receiver.all() if r["path"].startswith("/pd")] == []
    finally:
        receiver.close()


def test_bad_tls_config_is_refused_with_file_line_col(tmp_path):
    from conftest import BINARY
    config = tmp_path / "bad.yaml"
    config.write_text("""monitors:
  - name: no-port
    type: tls
    host: example.test
  - name: thresholds
    type: tls
    host: example.test
    port: 443
    warn_before: 2d
    down_before: 3d
  - name: plain
    type: http
    url: http://example.test/
    conditions: ["[CERTIFICATE_EXPIRATION] > 168h"]
""")
    run = subprocess.run([BINARY, "check", str(config)], capture_output=True, text=True, timeout=30)
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert f"{config}:2:5: monitors[0].port: missing; expected the port TLS is served on" in out
    assert f"{config}:9:18: monitors[1].warn_before: found 2d, less than down_before 3d" in out
    assert f"{config}:14:18: monitors[2].conditions[0]: found [CERTIFICATE_EXPIRATION] on an http:// url" in out
