"""A password login says nothing about who exists or which factor was wrong (docs/operations.md
"Users and single sign-on"): a single sign-on user (no password), a local user and an unknown
name take the same time and get the same answer; a second-factor user's right password
without its code gets the answer of a wrong one. Each try comes from an address of its own on
loopback (127.1.x.y), so the per-source throttle never answers first."""
import http.client
import http.cookiejar
import re
import statistics
import time
import urllib.parse
import urllib.request

from conftest import api_call, loopback_port
from oidc_provider import Provider
from test_roles import hash_password

ADMIN_TOKEN = "login-timing-admin-token-0123456"
CLIENT_SECRET = "login-timing-client-secret-43"
TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
TOTP_PASSWORD = "ops's long password, with a code"
TRIES = 200


class Sources:
    """Loopback addresses, a new one for each try."""

    def __init__(self):
        self.next = 0

    def take(self):
        self.next += 1
        return f"127.1.{self.next // 250}.{self.next % 250 + 1}"


def try_login(server, source, fields):
    """(status, seconds the POST took, the page's message) of one login form post."""
    host, port = urllib.parse.urlsplit(server.base).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", "/login")
        got = conn.getresponse()
        page = got.read().decode()
        cookie = "; ".join(c.split(";")[0] for c in got.headers.get_all("Set-Cookie"))
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        body = urllib.parse.urlencode(dict(fields, csrf=csrf))
        headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
        started = time.monotonic()
        conn.request("POST", "/login", body=body, headers=headers)
        answer = conn.getresponse()
        text = answer.read().decode()
        took = time.monotonic() - started
        message = re.search(r'role="alert"[^>]*>([^<]*)<', text)
        return answer.status, took, message.group(1) if message else text[:200]
    finally:
        conn.close()


def iqr(samples):
    q = statistics.quantiles(samples, n=4)
    return q[2] - q[0]


def test_an_sso_user_a_local_user_and_an_unknown_name_answer_alike(start_server, monkeypatch):
    port = loopback_port()
    redirect = f"http://127.0.0.1:{port}/login/oidc/callback"
    provider = Provider("trainwatch", CLIENT_SECRET, redirect).start()
    monkeypatch.setenv("SSO_CLIENT_SECRET", CLIENT_SECRET)
    try:
        server = start_server(f"""
monitors: []
auth:
  admin_tokens: ["{ADMIN_TOKEN}"]
  users:
    - {{name: ops, role: admin, password_hash: "{hash_password(TOTP_PASSWORD)}", totp_secret: {TOTP_SECRET}}}
  oidc:
    issuer: {provider.issuer}
    client_id: trainwatch
    client_secret: ${{SSO_CLIENT_SECRET}}
    redirect_url: {redirect}
    role_mapping:
      - {{group: everyone, role: viewer}}
""", listen=f"127.0.0.1:{port}")
        # The single sign-on user, made by a real login; the local one by an admin.
        provider.user = ("sasha", ["everyone"])
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        assert browser.open(server.base + "/login/oidc", timeout=30).status == 200
        status, body, _ = api_call(server, "POST", "/api/v1/users",
                                   {"name": "lena", "role": "editor", "password": "lena's long password"},
                                   token=ADMIN_TOKEN)
        assert status == 201, body
        listed = api_call(server, "GET", "/api/v1/users", token=ADMIN_TOKEN)[1]["users"]
        names = {u["name"]: u["source"] for u in listed}
        assert names.get("sasha") == "oidc" and names.get("lena") == "local", names

        sources = Sources()
        # The password is never learned before the second factor: the right one without
        # the code, or with a wrong code, answers as a wrong one does.
        wrong = try_login(server, sources.take(), {"name": "ops", "password": "a wrong password"})
        for fields in ({"name": "ops", "password": TOTP_PASSWORD},
                       {"name": "ops", "password": TOTP_PASSWORD, "code": "000000"}):
            status, _, message = try_login(server, sources.take(), fields)
            assert (status, message) == (wrong[0], wrong[2]), (fields, status, message, wrong)

        # Interleaved, so a change in the machine's load falls on every kind alike.
        times = {"sasha": [], "lena": [], "nobody-by-this-name": []}
        answers = set()
        for _ in range(TRIES):
            for name in times:
                status, took, message = try_login(server, sources.take(),
                                                  {"name": name, "password": "a guess at the password"})
                times[name].append(took)
                answers.add((status, message))
        assert answers == {(wrong[0], wrong[2])}, answers
        medians = {name: statistics.median(t) for name, t in times.items()}
        spreads = {name: iqr(t) for name, t in times.items()}
        for a in times:
            for b in times:
                assert abs(medians[a] - medians[b]) < min(spreads[a], spreads[b]), (medians, spreads)
        assert min(medians.values()) > 0.02, f"a password hash was checked each time: {medians}"
    finally:
        provider.stop()
