// What every chart of the dashboard shares (uPlot): times in UTC on an x axis whose labels
// never overlap (one line a tick, the date only where the day changes, ticks far enough
// apart for their labels), y values with SI suffixes that fit the axis ("15k", "1.2M",
// "250 ms"), and a width that follows the card (a phone gets a phone-wide chart).
(function () {
  function si(v) {
    if (v == null || !isFinite(v)) return "";
    const a = Math.abs(v);
    const units = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (const [f, s] of units) {
      if (a >= f) return +(v / f).toFixed(a / f >= 100 ? 0 : 1) + s;
    }
    if (a === 0) return "0";
    if (a < 0.01) return v.toExponential(0);
    return +v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2) + "";
  }
  function ms(v) {
    if (v == null || !isFinite(v)) return "";
    if (Math.abs(v) >= 1000) return si(v / 1000) + " s";
    return si(v) + " ms";
  }
  const pad = n => String(n).padStart(2, "0");
  // One line a tick: "14:05", the day as "Dec 6" where it changes, "Dec 6" alone for daily ticks.
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  function timeValues(u, splits, axisIdx, space, incr) {
    let lastDay = null;
    return splits.map(s => {
      const d = new Date(s * 1000);
      const day = months[d.getUTCMonth()] + " " + d.getUTCDate();
      const clock = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + (incr < 60 ? ":" + pad(d.getUTCSeconds()) : "");
      let label;
      if (incr >= 86400) label = day;
      else label = day !== lastDay && lastDay !== null ? day + " " + clock : clock;
      lastDay = day;
      return label;
    });
  }
  // Whole seconds and up: a tick never repeats the label of the one before.
  const kTimeIncrs = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
                      86400, 172800, 604800, 1209600, 2592000];
  function xAxis() {
    return { space: 90, incrs: kTimeIncrs, values: timeValues, size: 36, gap: 6 };
  }
  function yAxis(format) {
    return { space: 36, size: 62, values: (u, splits) => splits.map(format || si) };
  }
  function width(el) {
    return Math.max(240, Math.min(el.clientWidth || 600, 1160));
  }
  // Shades [start, end] spans (seconds) under the series: a chart's incidents.
  function shadeSpans(getSpans, colour) {
    return {
      hooks: {
        drawClear: [u => {
          const spans = getSpans() || [];
          const ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = colour;
          for (const [a, b] of spans) {
            const x0 = u.valToPos(a, "x", true), x1 = u.valToPos(Math.max(b, a + 1), "x", true);
            const left = Math.max(x0, u.bbox.left), right = Math.min(x1, u.bbox.left + u.bbox.width);
            if (right > left) ctx.fillRect(left, u.bbox.top, Math.max(2, right - left), u.bbox.height);
          }
          ctx.restore();
        }],
      },
    };
  }
  // Charts follow their card's width when the window changes (a phone turned sideways).
  const charts = new Set();
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const [plot, el, height] of charts) plot.setSize({ width: width(el), height });
    }, 150);
  });
  function track(plot, el, height) { charts.add([plot, el, height]); return plot; }
  function untrack(plot) { for (const c of charts) if (c[0] === plot) charts.delete(c); }
  const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  window.twCharts = { si, ms, xAxis, yAxis, width, shadeSpans, track, untrack, dark,
    grid: dark ? "#2e3640" : "#e3e7ec", ink: dark ? "#a9b3bd" : "#545d68" };
})();
