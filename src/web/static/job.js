// The job page, live: every few seconds the server renders the page's live part (header,
// rank grid, findings) and it replaces the old one in place; the focused rank cell keeps
// its focus. The markup comes from our own server, which escaped every text in it.
// Charts (uPlot, static/charts.js) refresh less often from /api/v1/jobs/{job}/series. They
// name the rank that matters: the one the findings blame (a cell that is down, warning or
// behind), or else the slowest by step time, drawn as its own line; the other ranks are a
// band (lowest to highest) with their median, so eight or a thousand ranks read the same.
// Every chart shares one time axis and one cursor.
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

  // The rank the findings blame: the worst cell of the grid, if any.
  function blamed() {
    for (const health of ["down", "warning", "behind"]) {
      const cell = live.querySelector('.rank[data-health="' + health + '"]');
      if (cell) return { key: "rank " + cell.dataset.rank, why: health === "behind" ? "straggling" : health };
    }
    return null;
  }
  function slowest(body) {
    let best = null, worst = -Infinity;
    for (const s of body.series) {
      const tail = s.points.slice(-20).map(p => p[1]).filter(v => v != null);
      if (!tail.length) continue;
      const mean = tail.reduce((a, b) => a + b, 0) / tail.length;
      if (mean > worst) { worst = mean; best = s.key; }
    }
    return best ? { key: best, why: body.metric === "gpu_mem" ? "fullest" : "slowest" } : null;
  }

  // [x, highest, lowest, median, named] from every series but the named one. Ranks report
  // at their own moments, so each series holds its last value (for kHoldS at most) until
  // its next: at every instant the band spans every rank, not the one that reported then.
  const kHoldS = 30;
  function banded(body, named) {
    const pick = body.series.find(s => named && s.key === named.key);
    const tables = body.series.map(s => [s.points.map(p => p[0] / 1000), s.points.map(p => p[1])]);
    const joined = uPlot.join(tables);
    const xs = joined[0];
    for (let i = 1; i < joined.length; i++) {
      let last = null, lastX = -Infinity;
      for (let j = 0; j < xs.length; j++) {
        if (joined[i][j] != null) { last = joined[i][j]; lastX = xs[j]; }
        else if (last != null && xs[j] - lastX <= kHoldS) joined[i][j] = last;
      }
    }
    const hi = [], lo = [], mid = [], one = [];
    const otherIdx = [], pickIdx = pick ? body.series.indexOf(pick) + 1 : -1;
    body.series.forEach((s, i) => { if (s !== pick) otherIdx.push(i + 1); });
    for (let j = 0; j < xs.length; j++) {
      const vals = otherIdx.map(i => joined[i][j]).filter(v => v != null).sort((a, b) => a - b);
      hi.push(vals.length ? vals[vals.length - 1] : null);
      lo.push(vals.length ? vals[0] : null);
      mid.push(vals.length ? vals[Math.floor((vals.length - 1) / 2)] : null);
      one.push(pickIdx > 0 ? joined[pickIdx][j] : null);
    }
    return { data: [xs, hi, lo, mid, one], others: otherIdx.length };
  }

  const plots = new Map();
  let span = [Infinity, -Infinity];
  let slow = null;
  async function refreshChart(el, named) {
    const C = window.twCharts;
    const metric = el.dataset.metric;
    const response = await fetch("/api/v1/jobs/" + encodeURIComponent(job) + "/series?metric=" + metric);
    if (!response.ok) return;
    const body = await response.json();
    if (body.series.length === 0) { el.textContent = "No data yet."; return; }
    const byRank = body.series[0].key.startsWith("rank ");
    // Step time names the slowest rank when no finding blames one; the other rank charts
    // follow it, so one rank is drawn alike on each. GPU memory names the fullest GPU.
    if (metric === "step_time" && !named) slow = slowest(body);
    const who = byRank ? named || slow : slowest(body);
    const { data, others } = banded(body, who);
    for (const x of data[0]) { span[0] = Math.min(span[0], x); span[1] = Math.max(span[1], x); }
    const fmt = body.unit === "ms" ? C.ms : body.unit === "%" ? v => C.si(v) + "%" : C.si;
    const accent = C.dark ? "#8ab4f8" : "#0b57d0", bad = C.dark ? "#ff6b60" : "#b3261e";
    const what = byRank ? "ranks" : "GPUs";
    const series = [{ value: (u, v) => v == null ? "" : new Date(v * 1000).toISOString().slice(11, 19) + " UTC" },
      { label: "other " + others + " " + what + ": highest", stroke: "transparent", value: (u, v) => fmt(v), points: { show: false } },
      { label: "lowest", stroke: "transparent", value: (u, v) => fmt(v), points: { show: false } },
      { label: "median", stroke: accent, width: 1.5, spanGaps: true, value: (u, v) => fmt(v) },
      { label: who ? who.key + " (" + who.why + ")" : "—", stroke: bad, width: 2.5, spanGaps: true, show: !!who,
        value: (u, v) => fmt(v) }];
    const key = metric + "|" + (who ? who.key : "");
    const old = plots.get(metric);
    if (old && old.key === key) { old.plot.setData(data); return; }
    if (old) { C.untrack(old.plot); old.plot.destroy(); }
    el.textContent = "";
    const height = 200;
    const plot = new uPlot({
      width: C.width(el), height, series,
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      cursor: { sync: { key: "job-" + job } },
      bands: [{ series: [1, 2], fill: C.dark ? "rgba(138,180,248,0.18)" : "rgba(11,87,208,0.12)" }],
      axes: [Object.assign(C.xAxis(), { stroke: C.ink, grid: { stroke: C.grid } }),
             Object.assign(C.yAxis(fmt), { stroke: C.ink, grid: { stroke: C.grid } })],
    }, data, el);
    plots.set(metric, { plot: C.track(plot, el, height), key });
  }
  async function refreshCharts() {
    if (document.hidden || typeof uPlot === "undefined" || !window.twCharts) return;
    const named = blamed();
    span = [Infinity, -Infinity];
    for (const el of document.querySelectorAll(".chart[data-metric]")) {
      try { await refreshChart(el, named); } catch (e) { /* the next tick tries again */ }
    }
    // One time axis for every chart, whichever metric started or stopped first.
    if (span[0] < span[1]) for (const { plot } of plots.values()) plot.setScale("x", { min: span[0], max: span[1] });
  }

  setInterval(refreshLive, kLiveMs);
  refreshCharts();
  setInterval(refreshCharts, kChartsMs);
})();
