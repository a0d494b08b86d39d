"""Users, roles and per-user API tokens, as a team uses them: a viewer reads everything but
secrets and changes nothing, an editor runs monitors but not people, an admin manages users
and tokens; a revoked token stops at once; every write leaves an audit row naming who."""
import http.cookiejar
import re
import subprocess
import time
import urllib.parse
import urllib.request

from conftest import BINARY, api_call, wait_for

ADMIN_TOKEN = "roles-admin-token-0123456789abcdef"
HB_TOKEN = "roles-heartbeat-token-0123456789"
CONFIG_PASSWORD = "config user's long password"


def hash_password(password):
    done = subprocess.run([BINARY, "hash-password"], input=password + "\n", capture_output=True, text=True,
                          check=True, timeout=30)
    return done.stdout.strip()


def config(password_hash):
    return f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: {HB_TOKEN}}}
auth:
  admin_tokens: ["{ADMIN_TOKEN}"]
  users:
    - {{name: root, role: admin, password_hash: "{password_hash}"}}
"""


def make_user(server, name, role):
    status, body, _ = api_call(server, "POST", "/api/v1/users",
                               {"name": name, "role": role, "password": f"{name}'s long password"},
                               token=ADMIN_TOKEN)
    assert status == 201, body
    status, body, _ = api_call(server, "POST", "/api/v1/tokens", {"name": "laptop", "owner": name},
                               token=ADMIN_TOKEN)
    assert status == 201 and body["token"].startswith("tw_") and body["role"] == role, body
    return body


def test_each_role_does_what_it_may_and_no_more(start_server):
    server = start_server(config(hash_password(CONFIG_PASSWORD)))
    viewer = make_user(server, "vera", "viewer")
    editor = make_user(server, "ed", "editor")
    admin = make_user(server, "ada", "admin")
    urllib.request.urlopen(urllib.request.Request(server.base + f"/ping/{HB_TOKEN}", data=b"epoch 3 done"),
                           timeout=10).read()

    # A viewer reads the private views, secrets still hidden.
    pings = lambda token: api_call(server, "GET", "/api/v1/monitors/nightly/pings", token=token)[1]["pings"]
    assert pings(None)[0]["body"] is None, "the public never reads a ping's body"
    assert pings(viewer["token"])[0]["body"] == "epoch 3 done"
    monitor = lambda token: api_call(server, "GET", "/api/v1/monitors/nightly", token=token)[1]
    assert monitor(viewer["token"]).get("ping_url") is None, "a ping URL is a credential: not for viewers"
    assert HB_TOKEN in monitor(editor["token"])["ping_url"]

    # Every write a viewer tries is a 403 problem naming the role it needs.
    writes = [
        ("POST", "/api/v1/monitors/nightly/pause", None, "editor"),
        ("POST", "/api/v1/monitors", {"name": "x", "type": "tcp", "host": "127.0.0.1", "port": 9}, "editor"),
        ("DELETE", "/api/v1/monitors/nightly", None, "editor"),
        ("POST", "/api/v1/maintenance", {"title": "t", "monitors": ["nightly"], "start": "2030-01-01T00:00:00Z",
                                         "end": "2030-01-01T01:00:00Z"}, "editor"),
        ("POST", "/api/v1/incidents/1/updates", {"status": "identified", "text": "x"}, "editor"),
        ("POST", "/api/v1/users", {"name": "eve", "role": "admin", "password": "eve's long password"}, "admin"),
        ("DELETE", "/api/v1/users/ed", None, "admin"),
    ]
    for method, path, body, needed in writes:
        status, problem, headers = api_call(server, method, path, body, token=viewer["token"])
        assert status == 403, (method, path, status, problem)
        assert headers["Content-Type"].startswith("application/problem+json")
        assert f"needs the {needed} role" in problem["detail"] and "vera" in problem["detail"], problem
    assert api_call(server, "GET", "/api/v1/users", token=viewer["token"])[0] == 403
    assert api_call(server, "GET", "/api/v1/audit", token=viewer["token"])[0] == 403
    assert monitor(None)["status"] != "paused"

    # An editor runs monitors but not people.
    assert api_call(server, "POST", "/api/v1/monitors/nightly/pause", token=editor["token"])[0] == 200
    assert monitor(None)["status"] == "paused"
    status, problem, _ = api_call(server, "POST", "/api/v1/users",
                                  {"name": "eve", "role": "viewer", "password": "eve's long password"},
                                  token=editor["token"])
    assert status == 403 and "needs the admin role" in problem["detail"]
    channel = {"name": "ed-hook", "type": "webhook", "url": "http://127.0.0.1:9/hook"}
    status, problem, _ = api_call(server, "POST", "/api/v1/notifications", channel, token=editor["token"])
    assert status == 403 and "needs the admin role" in problem["detail"], "channels are an admin's"
    assert api_call(server, "POST", "/api/v1/notifications", channel, token=admin["token"])[0] == 201
    status, problem, _ = api_call(server, "POST", "/api/v1/tokens", {"name": "more", "role": "admin"},
                                  token=editor["token"])
    assert status == 400 and "cannot have more" in problem["detail"], "a token never outranks its owner"

    # An admin manages people: makes a user, lowers one, revokes a token, at once.
    status, body, _ = api_call(server, "POST", "/api/v1/users",
                               {"name": "eve", "role": "editor", "password": "eve's long password"},
                               token=admin["token"])
    assert status == 201 and body == {"name": "eve", "role": "editor", "source": "local", "second_factor": False,
                                      "read_only": False}
    assert api_call(server, "PATCH", "/api/v1/users/ed", {"role": "viewer"}, token=admin["token"])[0] == 200
    assert api_call(server, "POST", "/api/v1/monitors/nightly/resume", token=editor["token"])[0] == 403, \
        "lowering a user lowers their tokens"
    assert api_call(server, "DELETE", f"/api/v1/tokens/{viewer['id']}", token=admin["token"])[0] == 204
    status, _, headers = api_call(server, "GET", "/api/v1/tokens", token=viewer["token"])
    assert status == 401 and "invalid_token" in headers["WWW-Authenticate"], "a revoked token is refused at once"
    status, problem, _ = api_call(server, "PATCH", "/api/v1/users/root", {"role": "viewer"}, token=admin["token"])
    assert status == 409 and "config file" in problem["detail"], "a config user is changed only in the file"
    listed = {u["name"]: u for u in api_call(server, "GET", "/api/v1/users", token=admin["token"])[1]["users"]}
    assert listed["root"]["read_only"] and listed["root"]["source"] == "config"
    assert set(listed) == {"root", "vera", "ed", "ada", "eve"}
    tokens = api_call(server, "GET", "/api/v1/tokens", token=admin["token"])[1]["tokens"]
    assert all("token" not in t and "digest" not in t for t in tokens), "a token is shown once, when made"

    # Every allowed write left an audit row naming its actor; refused ones did not.
    entries = api_call(server, "GET", "/api/v1/audit", token=ADMIN_TOKEN)[1]["entries"]
    seen = [(e["actor"], e["action"]) for e in reversed(entries)]
    assert ("token laptop of ed", "POST /api/v1/monitors/nightly/pause") in seen
    assert ("token laptop of ada", "POST /api/v1/users") in seen
    assert ("token laptop of ada", "PATCH /api/v1/users/ed") in seen
    assert ("token laptop of ada", f"DELETE /api/v1/tokens/{viewer['id']}") in seen
    assert ("admin token", "POST /api/v1/users") in seen
    assert ("token laptop of ada", "POST /api/v1/notifications") in seen
    assert not any(actor == "token laptop of vera" for actor, _ in seen), "refused writes change nothing"
    assert all(e["source"] == "127.0.0.1" and e["at"].endswith("Z") for e in entries)


def test_a_user_logs_in_with_a_password_and_a_viewer_session_cannot_write(start_server):
    server = start_server(config(hash_password(CONFIG_PASSWORD)))
    make_user(server, "vera", "viewer")

    def browser_login(name, password):
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(server.base + "/login", timeout=10).read().decode()
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({"csrf": csrf, "name": name, "password": password}).encode()
        try:
            landed = opener.open(urllib.request.Request(server.base + "/login", data=form), timeout=10)
            return opener, landed.status, landed.read().decode()
        except urllib.error.HTTPError as error:
            return opener, error.code, error.read().decode()

    _, status, page = browser_login("root", "not the password")
    assert status == 403 and "Wrong user name, password or code" in page
    opener, status, page = browser_login("root", CONFIG_PASSWORD)
    assert status == 200 and 'action="/logout"' in page, "the config admin is logged in"

    opener, status, page = browser_login("vera", "vera's long password")
    assert status == 200
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    pause = urllib.request.Request(server.base + "/monitors/nightly/pause",
                                   data=urllib.parse.urlencode({"csrf": csrf}).encode())
    try:
        opener.open(pause, timeout=10)
        raise AssertionError("a viewer's session paused a monitor")
    except urllib.error.HTTPError as error:
        assert error.code == 403 and "needs the editor role" in error.read().decode()
    assert api_call(server, "GET", "/api/v1/monitors/nightly")[1]["status"] != "paused"


def test_the_last_admin_cannot_be_removed_or_lowered_once_no_admin_token_is_configured(start_server):
    """The operator bootstraps with an admin token, makes ada an admin, then drops the token
    from the config: ada is the installation's only admin and cannot remove or lower
    herself (409, nothing changed) until another admin exists."""
    bootstrap = f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: {HB_TOKEN}}}
auth:
  admin_tokens: ["{ADMIN_TOKEN}"]
"""
    server = start_server(bootstrap)
    ada = make_user(server, "ada", "admin")["token"]
    server.config_path.write_text(bootstrap.split("auth:")[0])
    server.reload()
    wait_for(lambda: api_call(server, "GET", "/api/v1/users", token=ADMIN_TOKEN)[0] == 401, timeout=10,
             what="the bootstrap token to be gone after the reload")

    for method, body in (("DELETE", None), ("PATCH", {"role": "viewer"})):
        status, problem, headers = api_call(server, method, "/api/v1/users/ada", body, token=ada)
        assert status == 409 and headers["Content-Type"] == "application/problem+json", (method, status, problem)
        assert "ada is the last admin; make another admin first" in problem["detail"], problem
    users = {u["name"]: u["role"] for u in api_call(server, "GET", "/api/v1/users", token=ada)[1]["users"]}
    assert users == {"ada": "admin"}, users

    status, _, _ = api_call(server, "POST", "/api/v1/users",
                            {"name": "bob", "role": "admin", "password": "bob's long password"}, token=ada)
    assert status == 201
    bob = api_call(server, "POST", "/api/v1/tokens", {"name": "laptop", "owner": "bob"}, token=ada)[1]["token"]
    status, body, _ = api_call(server, "PATCH", "/api/v1/users/ada", {"role": "viewer"}, token=ada)
    assert status == 200 and body["role"] == "viewer", body
    assert api_call(server, "GET", "/api/v1/users", token=ada)[0] == 403, "lowering ada lowers her token"
    users = {u["name"]: u["role"] for u in api_call(server, "GET", "/api/v1/users", token=bob)[1]["users"]}
    assert users == {"ada": "viewer", "bob": "admin"}, users


def test_a_token_revoked_on_one_replica_is_refused_on_every_replica_within_a_second(start_replicas):
    first, *others = start_replicas(3, ADMIN_TOKEN)
    made = make_user(first, "mei", "editor")
    # Made on one replica, the user and her token work on every replica.
    for replica in others:
        wait_for(lambda: api_call(replica, "GET", "/api/v1/tokens", token=made["token"])[0] == 200, timeout=5,
                 what="the new token on another replica")
    assert api_call(others[0], "POST", "/api/v1/monitors/canary/pause", token=made["token"])[0] == 200

    assert api_call(first, "DELETE", f"/api/v1/tokens/{made['id']}", token=ADMIN_TOKEN)[0] == 204
    revoked_at = time.monotonic()
    assert api_call(first, "GET", "/api/v1/tokens", token=made["token"])[0] == 401, "at once where revoked"
    for replica in others:
        wait_for(lambda: api_call(replica, "GET", "/api/v1/tokens", token=made["token"])[0] == 401,
                 timeout=1.0, interval=0.02, what="the revoked token refused on another replica")
    assert time.monotonic() - revoked_at < 1.0

    # Every replica's writes are in the one audit log.
    entries = api_call(others[1], "GET", "/api/v1/audit", token=ADMIN_TOKEN)[1]["entries"]
    seen = {(e["actor"], e["action"]) for e in entries}
    assert ("token laptop of mei", "POST /api/v1/monitors/canary/pause") in seen
    assert ("admin token", f"DELETE /api/v1/tokens/{made['id']}") in seen
