// The job page, live: every few seconds the server renders the page's live part (header,
// rank grid, findings) and it replaces the old one in place; the focused rank cell keeps
// its focus. The markup comes from our own server, which escaped every text in it.
// Charts (uPlot) refresh less often from /api/v1/jobs/{job}/series.
(function () {
  const kLiveMs = 3000, kChartsMs = 10000;
  const live = document.getElementById("live");
  if (!live) return;
  const job = live.dataset.job;
  const base = "/jobs/" + encodeURIComponent(job);

  async function refreshLive() {
    if (document.hidden) return;
    try {
      const response = await fetch(base + "/live");
      if (!response.ok) return;
      const html = await response.text();
      const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.rank : undefined;
      live.innerHTML = html;
      if (focused !== undefined) {
        const cell = live.querySelector('[data-rank="' + CSS.escape(focused) + '"]');
        if (cell) cell.focus();
      }
    } catch (e) { /* the next tick tries again */ }
  }

  const plots = new Map();
  async function refreshChart(el) {
    const metric = el.dataset.metric;
    const response = await fetch("/api/v1/jobs/" + encodeURIComponent(job) + "/series?metric=" + metric);
    if (!response.ok) return;
    const body = await response.json();
    const tables = body.series.map(s => [s.points.map(p => p[0] / 1000), s.points.map(p => p[1])]);
    if (tables.length === 0) { el.textContent = "No data yet."; return; }
    const data = uPlot.join(tables);
    const old = plots.get(metric);
    if (old && old.series.length === data.length) { old.setData(data); return; }
    if (old) old.destroy();
    el.textContent = "";
    const palette = ["#0b57d0", "#b3261e", "#1f7a3a", "#a15c00", "#6a1b9a", "#00838f", "#5d4037", "#37474f"];
    const series = [{}].concat(body.series.map((s, i) => ({
      label: s.key, stroke: palette[i % palette.length], spanGaps: true,
      dash: i >= palette.length ? [4, 4] : undefined,  // past 8 series, dashes tell them apart
    })));
    plots.set(metric, new uPlot({ width: Math.min(el.clientWidth || 440, 920), height: 200, series }, data, el));
  }
  async function refreshCharts() {
    if (document.hidden || typeof uPlot === "undefined") return;
    for (const el of document.querySelectorAll(".chart[data-metric]")) {
      try { await refreshChart(el); } catch (e) { /* the next tick tries again */ }
    }
  }

  setInterval(refreshLive, kLiveMs);
  refreshCharts();
  setInterval(refreshCharts, kChartsMs);
})();
