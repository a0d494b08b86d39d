// A monitor's page, live: the response-time chart (uPlot) over the chosen range (1 h,
// 24 h, 7 d, 30 d: switched in place, and kept in the address for a reload), failed checks
// as red marks and incidents shaded; refreshed every few seconds, as is the state pill.
(function () {
  const kRefreshMs = 10000, kStateMs = 5000;
  const el = document.getElementById("chart");
  const pill = document.getElementById("state");
  const name = (el && el.dataset.monitor) || (pill && pill.closest("h1").firstChild.textContent.trim());
  const words = { up: ["\u2713", "Up"], down: ["\u2715", "Down"], pending: ["\u2026", "Pending"],
                  paused: ["\u275a\u275a", "Paused"], maintenance: ["\u2699", "Maintenance"] };

  async function refreshState() {
    if (document.hidden || !pill) return;
    try {
      const response = await fetch("/api/v1/monitors/" + encodeURIComponent(name) + "?limit=1");
      if (!response.ok) return;
      const m = await response.json();
      const shown = m.status !== "paused" && m.maintenance ? "maintenance" : m.status;
      const [icon, word] = words[shown] || ["?", shown];
      if (pill.className === "pill pill-" + shown) return;
      pill.className = "pill pill-" + shown;
      const i = document.createElement("span");
      i.setAttribute("aria-hidden", "true");
      i.textContent = icon;
      pill.replaceChildren(i, " " + word);
    } catch (e) { /* the next tick tries again */ }
  }
  if (pill) setInterval(refreshState, kStateMs);

  if (!el || typeof uPlot === "undefined" || !window.twCharts) return;
  const C = window.twCharts;
  let range = el.dataset.range || "24h";
  let plot = null, spans = [];
  const note = document.getElementById("chart-note");

  function build(data) {
    const height = 240;
    const opts = {
      width: C.width(el), height,
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [Object.assign(C.xAxis(), { stroke: C.ink, grid: { stroke: C.grid } }),
             Object.assign(C.yAxis(C.ms), { stroke: C.ink, grid: { stroke: C.grid } })],
      series: [{ label: "time (UTC)", value: (u, v) => v == null ? "" : new Date(v * 1000).toISOString().slice(0, 19).replace("T", " ") },
               { label: "response time", stroke: C.dark ? "#8ab4f8" : "#0b57d0", width: 1.5, spanGaps: false,
                 value: (u, v) => v == null ? "–" : C.ms(v) },
               { label: "failed checks", stroke: "#d93025", width: 0, paths: () => null,
                 points: { show: true, size: 7, fill: "#d93025", stroke: "#d93025" },
                 value: (u, v) => v == null ? "0" : "some" }],
      plugins: [C.shadeSpans(() => spans, C.dark ? "rgba(255,107,96,0.18)" : "rgba(179,38,30,0.12)")],
    };
    return C.track(new uPlot(opts, data, el), el, height);
  }

  async function refresh() {
    if (document.hidden) return;
    try {
      const response = await fetch("/monitors/" + encodeURIComponent(name) + "/series?range=" + range);
      if (!response.ok) return;
      const body = await response.json();
      spans = body.incidents || [];
      const pts = body.points || [];
      const xs = pts.map(p => p[0]);
      const lat = pts.map(p => p[1]);
      // A failure mark sits at the bottom of the chart, where it never hides a latency.
      const failed = pts.map(p => p[2] > 0 ? 0 : null);
      const data = [xs, lat, failed];
      if (!plot) plot = build(data);
      else plot.setData(data);
      // A monitor younger than the range is drawn from its first check, not squeezed right.
      plot.setScale("x", { min: xs.length ? Math.max(body.begins, xs[0] - 1) : body.begins, max: body.to });
      if (note) {
        note.textContent = pts.length === 0 ? "No checks in this range yet."
          : body.begins > body.from ? "Covers what the stored checks reach: from " +
            new Date(body.begins * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC." : "";
      }
    } catch (e) { /* the next tick tries again */ }
  }

  for (const link of document.querySelectorAll(".ranges a[data-range]")) {
    link.addEventListener("click", ev => {
      ev.preventDefault();
      range = link.dataset.range;
      for (const other of document.querySelectorAll(".ranges a")) other.removeAttribute("aria-current");
      link.setAttribute("aria-current", "true");
      history.replaceState(null, "", "?range=" + range);
      refresh();
    });
  }
  refresh();
  setInterval(refresh, kRefreshMs);
})();
