"""Who a single sign-on login is: the provider's issuer and subject, never the user name its
token claims (OpenID Connect Core 5.7); what an ID token must be addressed to (3.1.3.7);
and what a login answers while the provider's key endpoint hangs (docs/api.md, "GET
/login/oidc/callback"). Through the real provider of oidc_provider.py."""
import http.cookiejar
import time
import urllib.error
import urllib.request

import pytest

from conftest import api_call, loopback_port
from oidc_provider import Provider

ADMIN_TOKEN = "sso-identity-admin-token-0123456"
CLIENT_SECRET = "trainwatch-client-secret-43"
TRUSTED = "reports-service"


@pytest.fixture
def sso(start_server, monkeypatch):
    port = loopback_port()
    redirect = f"http://127.0.0.1:{port}/login/oidc/callback"
    provider = Provider("trainwatch", CLIENT_SECRET, redirect).start()
    monkeypatch.setenv("SSO_CLIENT_SECRET", CLIENT_SECRET)
    server = start_server(f"""
monitors: []
auth:
  admin_tokens: ["{ADMIN_TOKEN}"]
  oidc:
    issuer: {provider.issuer}
    client_id: trainwatch
    client_secret: ${{SSO_CLIENT_SECRET}}
    redirect_url: {redirect}
    trusted_audiences: [{TRUSTED}]
    role_mapping:
      - {{group: everyone, role: viewer}}
      - {{group: ml-platform, role: admin}}
""", listen=f"127.0.0.1:{port}")
    yield server, provider
    provider.stop()


def login(server, provider, user, claims=None):
    """(opener with the browser's cookies, status, page) after the whole flow as `user`:
    (preferred_username, groups[, subject]), the ID token carrying `claims` too."""
    provider.user = user
    provider.claims = claims or {}
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        landed = opener.open(server.base + "/login/oidc", timeout=30)
        return opener, landed.status, landed.read().decode()
    except urllib.error.HTTPError as error:
        return opener, error.code, error.read().decode()


def signed_in(opener, server):
    try:
        return opener.open(server.base + "/api/v1/tokens", timeout=10).status == 200
    except urllib.error.HTTPError:
        return False


def users(server):
    return {u["name"]: u for u in api_call(server, "GET", "/api/v1/users", token=ADMIN_TOKEN)[1]["users"]}


def tokens_of(server, owner):
    listed = api_call(server, "GET", "/api/v1/tokens", token=ADMIN_TOKEN)[1]["tokens"]
    return sorted((t["id"], t["role"], t["revoked"]) for t in listed if t["owner"] == owner)


def test_another_subject_with_the_same_user_name_never_becomes_that_user(sso):
    server, provider = sso
    alice, status, page = login(server, provider, ("alice", ["ml-platform"], "sub-alice"))
    assert status == 200, page
    made = api_call(server, "POST", "/api/v1/tokens", {"name": "laptop", "owner": "alice"}, token=ADMIN_TOKEN)
    assert made[0] == 201
    before = tokens_of(server, "alice")

    # Another person at the same provider whose preferred_username is also "Alice".
    for name in ("alice", "Alice"):
        impostor, status, page = login(server, provider, (name, ["everyone"], "sub-someone-else"))
        assert status == 409 and "another single sign-on account" in page, (status, page)
        assert not signed_in(impostor, server), "the impostor has no session"
    assert users(server)["alice"]["role"] == "admin", "her role is unchanged"
    assert tokens_of(server, "alice") == before, "her tokens are unchanged"
    assert set(users(server)) == {"alice"}

    # The same subject under a new preferred_username is still alice, and her groups
    # (her provider's claims, for her subject alone) set her role.
    again, status, page = login(server, provider, ("alice-renamed", ["everyone"], "sub-alice"))
    assert status == 200, page
    assert signed_in(again, server)
    assert set(users(server)) == {"alice"}, "the name a token claims only names a new user"
    assert users(server)["alice"]["role"] == "viewer"


@pytest.mark.parametrize("claims, refused_for", [
    ({"aud": ["trainwatch", "billing"]}, "no azp"),
    ({"aud": ["trainwatch", "billing"], "azp": "trainwatch"}, "billing"),
    ({"aud": ["trainwatch", TRUSTED]}, "no azp"),
    ({"aud": ["trainwatch"], "azp": "billing"}, "azp"),
    ({"aud": ["billing"], "azp": "trainwatch"}, "aud lacks"),
])
def test_an_id_token_for_other_audiences_is_refused(sso, claims, refused_for):
    server, provider = sso
    opener, status, page = login(server, provider, ("carol", ["ml-platform"]), claims)
    assert status == 403 and refused_for in page, (status, page)
    assert not signed_in(opener, server) and "carol" not in users(server)


def test_an_id_token_also_for_a_trusted_audience_and_authorized_for_us_is_taken(sso):
    server, provider = sso
    opener, status, page = login(server, provider, ("dave", ["ml-platform"]),
                                 {"aud": ["trainwatch", TRUSTED], "azp": "trainwatch"})
    assert status == 200, page
    assert signed_in(opener, server)


def test_a_hanging_key_endpoint_costs_a_login_seconds_and_answers_502(sso):
    server, provider = sso
    assert login(server, provider, ("erin", ["ml-platform"]))[1] == 200
    provider.rotate_keys()   # the next tokens need keys the server does not hold
    provider.jwks_delay = 60
    answers = []
    for _ in range(3):
        started = time.monotonic()
        _, status, page = login(server, provider, ("erin", ["ml-platform"]))
        answers.append((status, round(time.monotonic() - started, 1)))
        assert "cannot be reached" in page, page
    assert [status for status, _ in answers] == [502, 502, 502], answers
    # At most the wait for the keys (2 s) and the flow's own round trips: never the key
    # read's whole deadline, and never one login's wait added to the next one's.
    assert all(seconds < 6 for _, seconds in answers), answers
    assert sum(seconds for _, seconds in answers) < 10, answers
