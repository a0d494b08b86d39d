"""Guessing one account's password from many addresses (docs/operations.md, "Who may write,
and how often"): once the account has had its allowance of wrong passwords, each further
wrong one takes the whole allowance of the address it came from, so an address that guessed
twice waits (429 with Retry-After) although it is far from its own limit of 10. The owner,
from an address that did not guess, logs in at once; a waiting address is answered again,
right password and all, once its Retry-After has passed."""
import html
import http.client
import re
import urllib.parse

from conftest import wait_for
from test_roles import hash_password

ADMIN_TOKEN = "password-guessing-admin-token-01"
PASSWORD = "the owner's long and right password"
ACCOUNT_ALLOWANCE = 10  # GuessLimits::per_credential's burst


def post_login(server, source, password):
    """(status, Retry-After or None, whether a session cookie came back) of one password
    login posted from loopback address `source`, on a login form opened from there."""
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", "/login")
        page = conn.getresponse()
        csrf = html.unescape(re.search(r'name="csrf" value="([^"]+)"', page.read().decode()).group(1))
        cookie = "; ".join(c.split(";")[0] for c in page.headers.get_all("Set-Cookie"))
        form = urllib.parse.urlencode({"name": "ops", "password": password, "csrf": csrf})
        conn.request("POST", "/login", body=form,
                     headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        answer = conn.getresponse()
        answer.read()
        cookies = answer.headers.get_all("Set-Cookie") or []
        retry_after = answer.getheader("Retry-After")
        return (answer.status, int(retry_after) if retry_after else None,
                any(c.startswith("tw_session=") for c in cookies))
    finally:
        conn.close()


def test_wrong_passwords_for_one_account_are_throttled_across_addresses(start_server):
    server = start_server(f"""
monitors: []
auth:
  admin_tokens: ["{ADMIN_TOKEN}"]
  users:
    - {{name: ops, role: admin, password_hash: "{hash_password(PASSWORD)}"}}
""")
    # One wrong password from each of ten addresses: each is checked (403), and the
    # account's allowance is spent.
    for i in range(ACCOUNT_ALLOWANCE):
        assert post_login(server, f"127.0.4.{i + 1}", f"wrong guess {i}")[0] == 403, i

    # From then on an address gets one checked guess, and its second waits.
    guessers = [f"127.0.5.{i + 1}" for i in range(5)]
    for n, source in enumerate(guessers):
        assert post_login(server, source, f"another guess {n}")[0] == 403, source
        status, retry_after, _ = post_login(server, source, f"a second guess {n}")
        assert status == 429 and retry_after >= 1, (source, status, retry_after)

    # The owner is never locked out by strangers: a fresh address logs in at once.
    assert post_login(server, "127.0.6.1", PASSWORD) == (303, None, True)

    # A waiting address is not checked, not even with the right password...
    status, retry_after, session = post_login(server, guessers[0], PASSWORD)
    assert (status, session) == (429, False) and retry_after >= 1
    # ...and is answered again once its Retry-After has passed.
    wait_for(lambda: post_login(server, guessers[0], PASSWORD) == (303, None, True),
             timeout=retry_after + 30, interval=0.5, what="the throttled address to be let in again")
