"""A status page's Atom feed, read as a feed reader would: the real binary, a real SQLite
file, real failing HTTP targets on loopback. The feed lists what the public page lists —
the page's incidents with their updates — and nothing the page hides: no monitor of
another page, no text the target answered."""
import html
import re
import urllib.parse
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

from conftest import HealthTarget, api_call, wait_for
from test_public_views import fetch

TOKEN = "status-feed-admin-token-0123456789"
ATOM = "{http://www.w3.org/2005/Atom}"
# Text that breaks XML unless every writer escapes it.
MARKUP = """<b>NFS</b> & "quotes" 'too' </content>]]>"""
TITLE = """ML <training> & "friends" 'ops'"""
TARGET_SECRET = "TARGET-SECRET-feed-7f3a"


def monitor(name, port):
    return f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    timeout: 1s
    conditions:
      - "[BODY].status == ok"
"""


def config(public_port, private_port):
    title = TITLE.replace("'", "''")
    return f"""
monitors:{monitor("trainer", public_port)}{monitor("private-db", private_port)}
status_pages:
  - slug: ml
    title: '{title}'
    groups:
      - {{name: Training, monitors: [trainer]}}
  - slug: internal
    title: Internal
    groups:
      - {{name: Storage, monitors: [private-db]}}
auth:
  admin_tokens: ["{TOKEN}"]
"""


def fail(target):
    # What the target answers is the admin's to read; the public cause never quotes it.
    target.status = 503
    target.body = dict(target.body, status=f"degraded {TARGET_SECRET}")


def open_incident(server, name):
    server.wait_status(name, "down")
    incidents = wait_for(lambda: server.get(f"/api/v1/incidents?monitor={name}")[1]["incidents"],
                         what=f"{name}'s incident")
    return incidents[0]["id"]


def rfc3339(text):
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", text), text
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_feed(server, slug="ml", headers=None):
    status, body, response_headers = fetch(server, f"/status/{slug}/feed.atom", headers=headers)
    assert status == 200, (status, body[:500])
    assert response_headers["Content-Type"] == "application/atom+xml; charset=utf-8"
    return body, ET.fromstring(body.encode())


def check_atom(feed, base):
    """Every element RFC 4287 requires, and the links a reader follows."""
    assert feed.tag == f"{ATOM}feed"
    assert feed.findtext(f"{ATOM}id").startswith("urn:")
    assert feed.findtext(f"{ATOM}title") == TITLE
    rfc3339(feed.findtext(f"{ATOM}updated"))
    links = {link.get("rel"): link.get("href") for link in feed.findall(f"{ATOM}link")}
    assert links == {"self": f"{base}/status/ml/feed.atom", "alternate": f"{base}/status/ml"}, links
    entries = feed.findall(f"{ATOM}entry")
    for entry in entries:
        assert entry.findtext(f"{ATOM}id").startswith("urn:")
        assert entry.findtext(f"{ATOM}title")
        rfc3339(entry.findtext(f"{ATOM}updated"))
        assert entry.find(f"{ATOM}link").get("href").startswith(f"{base}/status/ml")
    updated = [rfc3339(e.findtext(f"{ATOM}updated")) for e in entries]
    assert updated == sorted(updated, reverse=True), "newest first"
    return entries


def test_the_feed_lists_the_pages_incident_and_its_update_and_nothing_the_page_hides(start_server):
    public_target, private_target = HealthTarget(), HealthTarget()
    try:
        server = start_server(config(public_target.port, private_target.port))
        server.wait_status("trainer", "up")
        server.wait_status("private-db", "up")
        fail(public_target)
        fail(private_target)
        incident = open_incident(server, "trainer")
        open_incident(server, "private-db")
        status, update, _ = api_call(server, "POST", f"/api/v1/incidents/{incident}/updates",
                                     {"status": "identified", "text": MARKUP}, TOKEN)
        assert status == 201, update

        # Updates show within the page's 5 s bound, as on the page itself.
        def entry_with_update():
            body, feed = read_feed(server)
            entries = check_atom(feed, server.base)
            mine = [e for e in entries if e.findtext(f"{ATOM}id").endswith(f":incident:{incident}")]
            return mine and MARKUP in html.unescape(mine[0].findtext(f"{ATOM}content")) and (body, mine[0])

        body, entry = wait_for(entry_with_update, timeout=20, what="the update in the feed")
        assert entry.findtext(f"{ATOM}title").startswith("trainer: ")
        assert entry.find(f"{ATOM}content").get("type") == "html"
        assert rfc3339(entry.findtext(f"{ATOM}updated")) == rfc3339(update["at"]), "dated by its latest change"
        # The entry's link is the incident on the page.
        link = urllib.parse.urlsplit(entry.find(f"{ATOM}link").get("href"))
        assert link.fragment == f"incident-{incident}"
        status, page, _ = fetch(server, link.path)
        assert status == 200 and f'id="{link.fragment}"' in page

        # Only this page's monitor; never what a target answered; the same for an admin.
        for text in (body, read_feed(server, headers={"Authorization": f"Bearer {TOKEN}"})[0]):
            assert "private-db" not in text and TARGET_SECRET not in text
        assert "private-db" in read_feed(server, "internal")[0], "the other page's feed has its own monitor"

        # The page's head advertises the feed to browsers and feed readers.
        _, page, _ = fetch(server, "/status/ml")
        head = page.split("</head>")[0]
        advert = re.search(r'<link rel="alternate" type="application/atom\+xml" title="([^"]*)" href="([^"]*)">', head)
        assert advert, head
        assert html.unescape(advert.group(1)).startswith(TITLE) and advert.group(2) == "/status/ml/feed.atom"

        # An unknown page is the page's own 404.
        for path in ("/status/nope/feed.atom", "/status/nope"):
            status, problem, headers = fetch(server, path)
            assert status == 404 and headers["Content-Type"].startswith("application/problem+json"), (path, status)
            assert "no status page 'nope'" in problem
    finally:
        public_target.close()
        private_target.close()


def test_a_page_without_incidents_is_a_valid_empty_feed_cached_as_the_page_is(start_server):
    target = HealthTarget()
    try:
        server = start_server(config(target.port, target.port))
        server.wait_status("trainer", "up")
        _, feed = read_feed(server)
        assert check_atom(feed, server.base) == []
        # One public copy for page and feed: a feed never carries caching the page does not.
        page_headers = fetch(server, "/status/ml")[2]
        feed_headers = fetch(server, "/status/ml/feed.atom", headers={"Authorization": f"Bearer {TOKEN}"})[2]
        for header in ("Cache-Control", "ETag", "Vary", "Set-Cookie"):
            assert feed_headers.get(header) == page_headers.get(header), header
    finally:
        target.close()


def test_a_maintenance_window_of_the_pages_monitor_is_an_entry_and_anothers_is_not(start_server):
    target = HealthTarget()
    try:
        server = start_server(config(target.port, target.port))
        server.wait_status("trainer", "up")
        now = datetime.now(timezone.utc)
        window = {"start": (now - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "end": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}
        for name in ("trainer", "private-db"):
            status, created, _ = api_call(server, "POST", "/api/v1/maintenance", dict(window, monitors=[name]), TOKEN)
            assert status == 201, created

        def maintenance_entries():
            entries = check_atom(read_feed(server)[1], server.base)
            return [e for e in entries if ":maintenance:" in e.findtext(f"{ATOM}id")]

        [entry] = wait_for(maintenance_entries, timeout=20, what="the maintenance entry")
        assert entry.findtext(f"{ATOM}title").startswith("trainer: maintenance until ")
        body = read_feed(server)[0]
        assert "private-db" not in body
    finally:
        target.close()
