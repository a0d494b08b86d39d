#!/usr/bin/env python3
"""What a browser fetches to show the dashboard the first time: trainwatch beside Uptime Kuma.

Both pages are opened in headless Chromium with an empty cache, and every byte the page
fetched until the network has been quiet for 2 s is summed from the browser's own resource
timing (the document, scripts, stylesheets, fonts, images; websockets and API answers are
left out, as they are data, not the page). trainwatch: `trainwatch serve` with 10 TCP
monitors, its dashboard `/` logged out. Uptime Kuma: its built front end (`dist/` of the npm
package `uptime-kuma`, fetched with `npm pack uptime-kuma`) served as static files with a
single-page fallback, opened at `/dashboard`; the server it would talk to is absent, so
this is the page before any data, the least it can weigh. Kuma ships each asset also
brotli-compressed (`.br`) and serves that to browsers that accept it: its compressed
weight is summed from those files. trainwatch serves no compression; its figure is the
bytes as sent.

Usage: bench/web/first_load.py --bin PATH --kuma-dist DIR [--runs 3]
"""
import argparse
import functools
import http.server
import pathlib
import statistics
import sys
import tempfile
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import dashboard_render  # noqa: E402  (its config writer and server start)

QUIET_S = 2.0
STATIC_TYPES = {"navigation", "script", "link", "css", "img", "font", "other"}


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--disable-application-cache"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(60)
    return driver


def fetched(driver, url):
    """{path: bytes} of every static resource the page at `url` fetched, once quiet."""
    driver.get(url)
    seen, quiet_since = -1, time.monotonic()
    while time.monotonic() - quiet_since < QUIET_S:
        count = driver.execute_script("return performance.getEntriesByType('resource').length")
        if count != seen:
            seen, quiet_since = count, time.monotonic()
        time.sleep(0.2)
    entries = driver.execute_script("""
        const nav = performance.getEntriesByType('navigation')[0];
        return [{name: nav.name, type: 'navigation', size: nav.decodedBodySize}].concat(
          performance.getEntriesByType('resource').map(e =>
            ({name: e.name, type: e.initiatorType, size: e.decodedBodySize})));""")
    return {e["name"].split("//", 1)[1].split("/", 1)[1]: e["size"] for e in entries
            if e["type"] in STATIC_TYPES and "/api/" not in e["name"] and "socket.io" not in e["name"]}


class SinglePage(http.server.SimpleHTTPRequestHandler):
    """Kuma's dist/: a file when it exists, index.html for every route of the app."""

    def send_head(self):
        if not (pathlib.Path(self.directory) / self.path.lstrip("/").split("?")[0]).is_file():
            self.path = "/index.html"
        return super().send_head()

    def log_message(self, *args):
        pass


def kuma_weight(driver, dist):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SinglePage, directory=str(dist)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        files = fetched(driver, f"http://127.0.0.1:{server.server_port}/dashboard")
    finally:
        server.shutdown()
    brotli = 0
    for path, size in files.items():
        compressed = dist / ((path.split("?")[0] or "index.html") + ".br")
        if path in ("", "dashboard"):
            compressed = dist / "index.html.br"
        brotli += compressed.stat().st_size if compressed.is_file() else size
    return files, brotli


def trainwatch_weight(driver, binary, work):
    work.mkdir()
    up = dashboard_render.listener()
    config = work / "first-load.yaml"
    dashboard_render.write_config(config, 10, up.getsockname()[1])
    proc, host, port = dashboard_render.start(binary, config, work / "data", work / "server.log")
    try:
        time.sleep(1)
        return fetched(driver, f"http://{host}:{port}/")
    finally:
        proc.terminate()
        proc.wait()
        up.close()


def summary(label, totals, extra=""):
    return (f"| {label} | {int(statistics.median(totals)):,} B ({min(totals):,}–{max(totals):,}) | {extra} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--kuma-dist", required=True, type=pathlib.Path)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    tw, kuma, kuma_br, tw_files, kuma_files = [], [], [], {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for first in (0, 1):  # alternate which page loads first
                for which in ((first + i) % 2 for i in range(2)):
                    driver = browser()  # a new browser: an empty cache
                    try:
                        if which == 0:
                            tw_files = trainwatch_weight(driver, args.bin, pathlib.Path(tmp) / f"tw-{run}-{first}")
                            tw.append(sum(tw_files.values()))
                        else:
                            kuma_files, compressed = kuma_weight(driver, args.kuma_dist)
                            kuma.append(sum(kuma_files.values()))
                            kuma_br.append(compressed)
                    finally:
                        driver.quit()
    print("| page | bytes fetched, median (min–max) | parts |")
    print("| --- | --- | --- |")
    print(summary("trainwatch `/` (10 monitors), as sent", tw,
                  f"{len(tw_files)} files: " + ", ".join(f"{k or '/'} {v:,}" for k, v in tw_files.items())))
    print(summary("Uptime Kuma `/dashboard`, uncompressed", kuma, f"{len(kuma_files)} files"))
    print(summary("Uptime Kuma `/dashboard`, brotli as it serves it", kuma_br, ""))
    print(f"\nratio (Kuma brotli / trainwatch as sent): {statistics.median(kuma_br) / statistics.median(tw):.1f}x; "
          f"uncompressed: {statistics.median(kuma) / statistics.median(tw):.1f}x")


if __name__ == "__main__":
    main()
