// The monitor page's response-time chart (uPlot), refreshed every few seconds from the
// monitor's recent results. Failed checks are drawn as a second series, so a failure is
// a shape on the chart and not only a colour.
(function () {
  const kRefreshMs = 5000;
  const el = document.getElementById("chart");
  if (!el || typeof uPlot === "undefined") return;
  const name = el.dataset.monitor;
  let plot = null;
  async function refresh() {
    try {
      const response = await fetch("/api/v1/monitors/" + encodeURIComponent(name) + "?limit=500");
      if (!response.ok) return;
      const m = await response.json();
      const rows = (m.results || []).slice().reverse();
      const xs = rows.map(r => Date.parse(r.at) / 1000);
      const ok = rows.map(r => r.ok ? r.latency_ms : null);
      const failed = rows.map(r => r.ok ? null : r.latency_ms);
      const data = [xs, ok, failed];
      if (!plot) {
        plot = new uPlot({
          width: Math.min(el.clientWidth || 800, 920), height: 240,
          series: [{}, { label: "ok (ms)", stroke: "#0b57d0" },
                   { label: "failed (ms)", stroke: "#b3261e", points: { show: true, size: 8 }, paths: () => null }],
        }, data, el);
      } else {
        plot.setData(data);
      }
    } catch (e) { /* the next tick tries again */ }
  }
  refresh();
  setInterval(refresh, kRefreshMs);
})();
