"""Login CSRF in a real browser: a page on another port of the same host plants the
login form's cookie and auto-submits the login form with the attacker's own admin token.

Cookies are not isolated by port and SameSite counts every port of a host as the same
site, so before the fix this logged the victim's browser in as the attacker. Now the
form's token is bound to a pre-login session kept on the server, and the browser's
Origin and Sec-Fetch-Site headers give the post away as coming from another origin."""
import html
import http.client
import re
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from selenium.webdriver.common.by import By

from conftest import wait_for
from test_web import browser  # noqa: F401  (the fixture: headless Chromium)

VICTIM_TOKEN = "victim-admin-token-0123456789"
ATTACKER_TOKEN = "attacker-admin-token-0123456789"
CONFIG = f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: nightly-ping-token-0123}}
auth:
  admin_tokens: ["{VICTIM_TOKEN}", "{ATTACKER_TOKEN}"]
"""


def attacker_login_form(server):
    """What the attacker gets by opening the login page itself: a pre-login id and its token."""
    with urllib.request.urlopen(server.base + "/login", timeout=10) as response:
        page = response.read().decode()
        cookie = response.headers["Set-Cookie"].split(";")[0]
    csrf = html.unescape(re.search(r'name="csrf" value="([^"]+)"', page).group(1))
    return cookie, csrf


class AttackerSite:
    """A page on another port of 127.0.0.1 that plants cookies and posts the login form."""

    def __init__(self, target_base, cookies, csrf):
        plants = "".join(f'document.cookie = "{c}; path=/";\n' for c in cookies)
        page = f"""<!doctype html><html><body>
<form id="f" method="post" action="{target_base}/login">
  <input type="hidden" name="csrf" value="{html.escape(csrf)}">
  <input type="hidden" name="token" value="{ATTACKER_TOKEN}">
</form>
<script>
{plants}document.getElementById("f").submit();
</script></body></html>""".encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def attacker_site():
    sites = []

    def make(*args):
        sites.append(AttackerSite(*args))
        return sites[-1]
    yield make
    for site in sites:
        site.close()


def logged_in(browser, server):
    browser.get(server.base + "/")
    return bool(browser.find_elements(By.ID, "logout"))


def test_a_page_on_another_port_cannot_log_the_browser_in(start_server, browser, attacker_site):  # noqa: F811
    server = start_server(CONFIG)
    cookie, csrf = attacker_login_form(server)
    assert cookie.startswith("tw_login=")
    # Plants the server's pre-login cookie (a real one, fetched by the attacker) and the
    # old double-submit cookie, then posts the form from its own origin.
    site = attacker_site(server.base, [cookie, "tw_login_csrf=" + csrf], csrf)
    browser.get(site.base + "/")
    wait_for(lambda: browser.current_url.startswith(server.base), what="the form's post to reach the server")
    answer = browser.find_element(By.TAG_NAME, "body").text
    assert not [c for c in browser.get_cookies() if c["name"] == "tw_session"], "a session cookie was set"
    assert not logged_in(browser, server), "the attacker's session must not stick to the victim's browser"
    assert browser.find_elements(By.ID, "login-link")
    # Refused by the browser's own word: the post came from the attacker's origin.
    assert site.base in answer and "403" in answer, answer

    # The victim's own login, on the server's own page, still works.
    browser.get(server.base + "/login")
    browser.find_element(By.ID, "token").send_keys(VICTIM_TOKEN)
    browser.find_element(By.ID, "login-submit").click()
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what="the victim's own login")


def test_a_planted_form_cookie_without_the_browser_headers_is_still_refused(start_server):
    """Without Origin/Sec-Fetch-Site (a client that leaves them out) the pre-login session
    still has to be one this server handed out, with its own token, used once."""
    server = start_server(CONFIG)
    url = urllib.parse.urlsplit(server.base)

    def post_login(cookie, csrf):
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        form = urllib.parse.urlencode({"token": ATTACKER_TOKEN, "csrf": csrf})
        conn.request("POST", "/login", body=form, headers={
            "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Set-Cookie") or ""

    # A double-submit pair made up by the attacker: no such pre-login session.
    status, cookies = post_login("tw_login=" + "c" * 64 + "; tw_login_csrf=" + "c" * 64, "c" * 64)
    assert status == 403 and "tw_session=" not in cookies
    cookie, csrf = attacker_login_form(server)
    assert post_login(cookie, "d" * 64)[0] == 403       # a real session, another token
    assert post_login(cookie, csrf)[0] == 403           # closed by the wrong try: one form, one post
    cookie, csrf = attacker_login_form(server)
    status, cookies = post_login(cookie, csrf)
    assert status == 303 and "tw_session=" in cookies
