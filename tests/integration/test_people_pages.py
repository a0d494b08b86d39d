"""The dashboard's pages for people, in real Chromium against the real binary: an admin
(a config user, logged in with a password) adds users and changes them on /settings/users,
a new user makes an API token on /settings/tokens and sees it once, the token works
against the API until the admin revokes it on the same page, /audit names who wrote what,
and a viewer is refused the admin pages. No page ever shows a token or a password hash
after the one-time display."""
import re
import urllib.error
import urllib.parse
import urllib.request

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import api_call, wait_for
from test_roles import hash_password
from test_web import browser, screenshot  # noqa: F401 (browser is a fixture)

ROOT_PASSWORD = "root's long config password"
MIA_PASSWORD = "mia's long first password"
VIC_PASSWORD = "vic's long reset password"


def config(password_hash):
    return f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: people-heartbeat-token-0123456789}}
auth:
  users:
    - {{name: root, role: admin, password_hash: "{password_hash}"}}
"""


def log_in(browser, server, name, password):
    browser.get(server.base + "/login")
    browser.find_element(By.ID, "name").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(password)
    browser.find_element(By.ID, "login-submit").click()
    wait_for(lambda: browser.find_elements(By.ID, "logout"), what=f"{name}'s session")


def log_out(browser):
    browser.find_element(By.ID, "logout").click()
    wait_for(lambda: browser.find_elements(By.ID, "login-link"), what="the login link")


def user_row(browser, name):
    return browser.find_elements(By.XPATH, f"//tr[@data-user='{name}']")


def on_page(read):
    """What `read` finds on the page, or None while the page is being replaced (a form's
    answer re-renders it: an element found a moment ago may be gone, or, read in the very
    moment the new page replaces it, belong to a page Chrome no longer has)."""
    try:
        return read()
    except (NoSuchElementException, StaleElementReferenceException):
        return None
    except WebDriverException as error:
        if "inspector error" in str(error):  # "Cannot find context with specified id"
            return None
        raise


def add_user(browser, name, role, password):
    browser.find_element(By.ID, "u-name").send_keys(name)
    Select(browser.find_element(By.ID, "u-role")).select_by_value(role)
    browser.find_element(By.ID, "u-password").send_keys(password)
    browser.find_element(By.ID, "add-user").click()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def unfollowed_get(url):
    """(status, Location) of a GET whose redirect is not followed."""
    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=10) as response:
            return response.status, response.headers.get("Location")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location")


def nav_links(browser):
    return [a.get_attribute("href").split("/", 3)[3] for a in browser.find_elements(By.CSS_SELECTOR, "header nav a")]


def test_an_admin_manages_people_and_a_users_token_is_shown_once_and_revoked(start_server, browser):
    root_hash = hash_password(ROOT_PASSWORD)
    server = start_server(config(root_hash))
    pages = []  # every page seen after the token's one-time display

    def visit(path):
        browser.get(server.base + path)
        return browser.page_source

    log_in(browser, server, "root", ROOT_PASSWORD)
    assert {"settings/tokens", "settings/users", "audit"} <= set(nav_links(browser))
    visit("/settings/users")
    root = user_row(browser, "root")[0]
    assert "from trainwatch.yaml, read-only" in root.text and "admin" in root.text
    assert not root.find_elements(By.TAG_NAME, "button"), "a config user is changed only in the file"

    add_user(browser, "mia", "editor", MIA_PASSWORD)
    wait_for(lambda: user_row(browser, "mia"), what="mia's row")
    add_user(browser, "vic", "editor", "vic's long first password")
    wait_for(lambda: user_row(browser, "vic"), what="vic's row")
    # The accounts' rules answer on the page: a taken name.
    add_user(browser, "mia", "viewer", "another long password")
    wait_for(lambda: on_page(lambda: "a user named mia exists" in browser.find_element(By.ID, "users-error").text),
             what="the taken-name error")
    # vic becomes a viewer, with a new password.
    visit("/settings/users")
    Select(browser.find_element(By.ID, "role-vic")).select_by_value("viewer")
    user_row(browser, "vic")[0].find_element(By.CLASS_NAME, "change-role").click()
    wait_for(lambda: on_page(lambda: "viewer" in user_row(browser, "vic")[0].find_element(
        By.XPATH, "td[@data-field='role']").text), what="vic's new role")
    # A short password is the accounts' error, on the page, naming the field (the browser's
    # own length check is lifted, as an old browser or a script would not have it).
    browser.execute_script("document.getElementById('password-vic').removeAttribute('minlength')")
    browser.find_element(By.ID, "password-vic").send_keys("short")
    user_row(browser, "vic")[0].find_element(By.CLASS_NAME, "reset-password").click()
    error = wait_for(lambda: on_page(lambda: (e := browser.find_element(By.ID, "users-error")) and (
        e.get_attribute("data-field"), e.get_attribute("data-user"), e.text)), what="the password error")
    assert error[:2] == ("password", "vic") and "expected at least 12" in error[2], error
    browser.find_element(By.ID, "password-vic").send_keys(VIC_PASSWORD)
    user_row(browser, "vic")[0].find_element(By.CLASS_NAME, "reset-password").click()
    wait_for(lambda: user_row(browser, "vic"), what="the users page again")
    screenshot(browser, "people-users")
    log_out(browser)

    # mia makes a token: it is on the answer to the POST, and on no page after.
    log_in(browser, server, "mia", MIA_PASSWORD)
    assert "settings/tokens" in nav_links(browser) and "audit" not in nav_links(browser)
    visit("/settings/tokens")
    browser.find_element(By.ID, "t-name").send_keys("ci")
    Select(browser.find_element(By.ID, "t-role")).select_by_value("editor")
    Select(browser.find_element(By.ID, "t-expires")).select_by_value("30d")
    browser.find_element(By.ID, "make-token").click()
    token = wait_for(lambda: on_page(lambda: browser.find_element(By.ID, "new-token-value").text),
                     what="the new token")
    assert token.startswith("tw_")
    screenshot(browser, "people-token-made")
    pages.append(visit("/settings/tokens"))
    assert token not in pages[-1] and not browser.find_elements(By.ID, "new-token-value")
    row = browser.find_element(By.XPATH, "//tr[@data-name='ci']")
    assert "editor" in row.text and "live" in row.text
    token_id = row.get_attribute("data-token")

    status, body, _ = api_call(server, "GET", "/api/v1/tokens", token=token)
    assert status == 200 and [t["name"] for t in body["tokens"]] == ["ci"], body

    # The answer that carries a token is kept by no cache (nor is the page without it).
    session = next(c["value"] for c in browser.get_cookies() if c["name"] == "tw_session")
    csrf = browser.find_element(By.NAME, "csrf").get_attribute("value")
    form = urllib.parse.urlencode({"csrf": csrf, "name": "script", "role": "viewer", "expires": "7d"}).encode()
    request = urllib.request.Request(server.base + "/settings/tokens", data=form, method="POST", headers={
        "Cookie": f"tw_session={session}", "Origin": server.base,
        "Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = response.read().decode()
        assert response.status == 201 and response.headers["Cache-Control"] == "no-store"
    script_token = re.search(r"tw_[0-9a-f]+", answer).group(0)
    assert api_call(server, "GET", "/api/v1/tokens", token=script_token)[0] == 200
    request = urllib.request.Request(server.base + "/settings/tokens", headers={"Cookie": f"tw_session={session}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Cache-Control"] == "no-store" and script_token not in response.read().decode()
    log_out(browser)

    # The admin sees every user's tokens with their owner, and revokes mia's.
    log_in(browser, server, "root", ROOT_PASSWORD)
    pages.append(visit("/settings/tokens"))
    row = browser.find_element(By.XPATH, f"//tr[@data-token='{token_id}']")
    assert row.find_element(By.XPATH, "td[@data-field='owner']").text == "mia"
    row.find_element(By.CLASS_NAME, "revoke-token").click()
    wait_for(lambda: on_page(lambda: "revoked" in browser.find_element(
        By.XPATH, f"//tr[@data-token='{token_id}']/td[@data-field='state']").text), what="the token revoked")
    pages.append(browser.page_source)
    status, problem, _ = api_call(server, "GET", "/api/v1/tokens", token=token)
    assert status == 401, (status, problem)

    # The audit log names who wrote what, newest first.
    pages.append(visit("/audit"))
    rows = [(r.find_element(By.XPATH, "td[@data-field='who']").text,
             r.find_element(By.XPATH, "td[@data-field='what']").text)
            for r in browser.find_elements(By.CSS_SELECTOR, "#audit tbody tr")]
    assert rows[0] == ("root", f"POST /settings/tokens/{token_id}/revoke"), rows
    assert ("mia", "POST /settings/tokens") in rows
    assert ("root", "POST /settings/users/vic/role") in rows
    assert rows.count(("root", "POST /settings/users/vic/password")) == 2, rows
    assert rows.count(("root", "POST /settings/users")) == 3, rows
    screenshot(browser, "people-audit")
    pages.append(visit("/settings/users"))
    log_out(browser)

    # A viewer gets the admin pages' 403, with none of their data.
    log_in(browser, server, "vic", VIC_PASSWORD)
    assert "audit" not in nav_links(browser) and "settings/users" not in nav_links(browser)
    for path in ("/audit", "/settings/users"):
        pages.append(visit(path))
        assert "needs the admin role" in browser.find_element(By.ID, "forbidden").text
        assert "POST /settings" not in pages[-1] and "mia" not in pages[-1]
    log_out(browser)
    # Without a session, every people page sends to the login page.
    for path in ("/audit", "/settings/users", "/settings/tokens"):
        status, location = unfollowed_get(server.base + path)
        assert (status, location) == (303, "/login"), (path, status, location)

    # The admin removes vic.
    log_in(browser, server, "root", ROOT_PASSWORD)
    visit("/settings/users")
    user_row(browser, "vic")[0].find_element(By.CLASS_NAME, "remove-user").click()
    wait_for(lambda: not user_row(browser, "vic"), what="vic removed")
    pages.append(browser.page_source)

    for page in pages:
        assert token not in page and script_token not in page and root_hash not in page and "$argon2" not in page
