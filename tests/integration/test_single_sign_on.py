"""Single sign-on through a real OpenID Connect provider (authlib's authorization server,
tests/integration/oidc_provider.py): a person's groups decide their role, a forged or
expired ID token opens no session, logout ends the session, and a provider that rotates
its signing key keeps working."""
import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import api_call, loopback_port
from oidc_provider import Provider

ADMIN_TOKEN = "sso-admin-token-0123456789abcdef"
HB_TOKEN = "sso-heartbeat-token-0123456789ab"
CLIENT_SECRET = "trainwatch-client-secret-42"


@pytest.fixture
def sso(start_server, monkeypatch):
    """(server, provider): trainwatch with auth.oidc pointing at a provider on loopback."""
    port = loopback_port()
    redirect = f"http://127.0.0.1:{port}/login/oidc/callback"
    provider = Provider("trainwatch", CLIENT_SECRET, redirect).start()
    monkeypatch.setenv("SSO_CLIENT_SECRET", CLIENT_SECRET)
    server = start_server(f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: {HB_TOKEN}}}
auth:
  admin_tokens: ["{ADMIN_TOKEN}"]
  oidc:
    issuer: {provider.issuer}
    client_id: trainwatch
    client_secret: ${{SSO_CLIENT_SECRET}}
    redirect_url: {redirect}
    button_text: Test IdP
    role_mapping:
      - {{group: everyone, role: viewer}}
      - {{group: researchers, role: editor}}
      - {{group: ml-platform, role: admin}}
""", listen=f"127.0.0.1:{port}")
    yield server, provider
    provider.stop()


def browser_login(server, provider, name, groups):
    """(opener with the browser's cookies, status, page) after following the whole flow."""
    provider.user = (name, groups)
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        landed = opener.open(server.base + "/login/oidc", timeout=15)
        return opener, landed.status, landed.read().decode()
    except urllib.error.HTTPError as error:
        return opener, error.code, error.read().decode()


def users(server):
    return {u["name"]: u for u in api_call(server, "GET", "/api/v1/users", token=ADMIN_TOKEN)[1]["users"]}


def test_the_login_page_offers_the_provider(sso):
    server, _ = sso
    page = urllib.request.urlopen(server.base + "/login", timeout=10).read().decode()
    assert 'href="/login/oidc"' in page and "Log in with Test IdP" in page


def test_groups_decide_the_role_and_logout_ends_the_session(sso):
    server, provider = sso
    admin, status, page = browser_login(server, provider, "alice", ["everyone", "ml-platform"])
    assert status == 200 and "Logged in" in page, page
    # The page refreshes to the dashboard; the session cookie is what it carries there.
    dashboard = admin.open(server.base + "/", timeout=10).read().decode()
    assert 'action="/logout"' in dashboard
    listed = admin.open(server.base + "/api/v1/users", timeout=10)
    assert listed.status == 200, "an ml-platform member is an admin"
    assert users(server)["alice"]["role"] == "admin" and users(server)["alice"]["source"] == "oidc"

    editor, status, page = browser_login(server, provider, "bob", ["everyone", "researchers"])
    assert status == 200, page
    assert users(server)["bob"]["role"] == "editor"
    with pytest.raises(urllib.error.HTTPError) as refused:
        editor.open(server.base + "/api/v1/users", timeout=10)
    assert refused.value.code == 403, "an editor does not manage users"
    page = editor.open(server.base + "/", timeout=10).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    editor.open(urllib.request.Request(server.base + "/monitors/nightly/pause",
                                       data=urllib.parse.urlencode({"csrf": csrf}).encode()), timeout=10)
    assert api_call(server, "GET", "/api/v1/monitors/nightly")[1]["status"] == "paused", "an editor's write"

    page = admin.open(server.base + "/", timeout=10).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    admin.open(urllib.request.Request(server.base + "/logout", data=urllib.parse.urlencode({"csrf": csrf}).encode()),
               timeout=10)
    with pytest.raises(urllib.error.HTTPError) as after:
        admin.open(server.base + "/api/v1/users", timeout=10)
    assert after.value.code in (401, 403), "the session ended at logout"


def test_a_person_in_no_mapped_group_is_refused_with_the_reason(sso):
    server, provider = sso
    _, status, page = browser_login(server, provider, "sam", ["sales"])
    assert status == 403 and "role_mapping" in page and "sales" in page, page
    assert "sam" not in users(server)


def test_a_tampered_id_token_opens_no_session(sso):
    server, provider = sso
    provider.corrupt_signature = True
    opener, status, page = browser_login(server, provider, "mallory", ["ml-platform"])
    assert status == 403 and "signature" in page, page
    assert "mallory" not in users(server)
    with pytest.raises(urllib.error.HTTPError):
        opener.open(server.base + "/api/v1/users", timeout=10)


def test_an_expired_id_token_opens_no_session(sso):
    server, provider = sso
    provider.id_token_lifetime = -3600
    _, status, page = browser_login(server, provider, "late", ["ml-platform"])
    assert status == 403 and "expired" in page, page
    assert "late" not in users(server)


def test_a_state_is_good_once(sso):
    server, provider = sso
    provider.user = ("alice", ["ml-platform"])

    class Stop(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    jar = http.cookiejar.CookieJar()
    stopping = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), Stop)
    with pytest.raises(urllib.error.HTTPError) as to_provider:
        stopping.open(server.base + "/login/oidc", timeout=10)
    authorize = to_provider.value.headers["Location"]
    assert "code_challenge_method=S256" in authorize and "nonce=" in authorize
    with pytest.raises(urllib.error.HTTPError) as back:
        stopping.open(authorize, timeout=10)
    callback = back.value.headers["Location"]
    assert stopping.open(callback, timeout=10).status == 200
    with pytest.raises(urllib.error.HTTPError) as replayed:
        stopping.open(callback, timeout=10)
    assert replayed.value.code == 403, "a callback replayed opens no second session"


def test_a_rotated_signing_key_is_fetched_and_trusted(sso):
    server, provider = sso
    assert browser_login(server, provider, "alice", ["ml-platform"])[1] == 200
    fetched = provider.jwks_requests
    provider.rotate_keys()
    _, status, page = browser_login(server, provider, "alice", ["ml-platform"])
    assert status == 200, page
    assert provider.jwks_requests == fetched + 1, "the new key was fetched once"

    # Unknown key ids cannot make the server hammer the provider: one re-read per 10 s.
    provider.rotate_keys()
    _, status, page = browser_login(server, provider, "alice", ["ml-platform"])
    assert status == 403 and "JWKS lacks" in page, page
    assert provider.jwks_requests == fetched + 1


def test_single_sign_on_alone_keeps_private_views_from_the_public(start_server, monkeypatch):
    """With auth.oidc and nothing else, nobody has logged in yet: the public still sees only
    the public view, never a single-user server's everything-to-everyone."""
    port = loopback_port()
    redirect = f"http://127.0.0.1:{port}/login/oidc/callback"
    provider = Provider("trainwatch", CLIENT_SECRET, redirect).start()
    monkeypatch.setenv("SSO_CLIENT_SECRET", CLIENT_SECRET)
    try:
        server = start_server(f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: {HB_TOKEN}}}
auth:
  oidc:
    issuer: {provider.issuer}
    client_id: trainwatch
    client_secret: ${{SSO_CLIENT_SECRET}}
    redirect_url: {redirect}
    role_mapping:
      - {{group: ml-platform, role: admin}}
""", listen=f"127.0.0.1:{port}")
        monitor = api_call(server, "GET", "/api/v1/monitors/nightly")[1]
        assert monitor.get("ping_url") is None, "the ping URL is a credential: not for the public"
        assert api_call(server, "POST", "/api/v1/monitors/nightly/pause")[0] == 401
        opener, status, _ = browser_login(server, provider, "kai", ["ml-platform"])
        assert status == 200
        page = opener.open(server.base + "/monitors/nightly", timeout=10).read().decode()
        assert f"/ping/{HB_TOKEN}" in page, "the admin who signed in sees the ping URL"
    finally:
        provider.stop()
