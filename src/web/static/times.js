// Relative times ("3 min ago", and "for 3 min" with data-for) move on with the clock between two renders of a page:
// every <time data-ago> is written again from its datetime, in the words the server uses
// (web/time_text.h); its title keeps the exact time in UTC.
(function () {
  const units = [[86400000, " day", " days"], [3600000, " h", " h"], [60000, " min", " min"], [1000, " s", " s"]];
  function count(n, u) { return n + (n === 1 ? u[1] : u[2]); }
  function words(ms) {
    ms = Math.abs(ms);
    if (ms < 1000) return ms === 0 ? "0 s" : Math.round(ms) + " ms";
    for (let i = 0; i < units.length; i++) {
      const n = Math.floor(ms / units[i][0]);
      if (n === 0) continue;
      let out = count(n, units[i]);
      if (i + 1 < units.length && n < 10) {
        const rest = Math.floor((ms - n * units[i][0]) / units[i + 1][0]);
        if (rest) out += " " + count(rest, units[i + 1]);
      }
      return out;
    }
    return "0 s";
  }
  function ago(iso, now) {
    const delta = now - Date.parse(iso);
    if (Math.abs(delta) < 5000) return "just now";
    let shown = Math.abs(delta);
    if (shown >= 60000) shown -= shown % 60000;
    return delta < 0 ? "in " + words(shown) : words(shown) + " ago";
  }
  function since(iso, now) {
    let shown = Math.max(0, now - Date.parse(iso));
    if (shown >= 60000) shown -= shown % 60000;
    return words(shown);
  }
  function update() {
    const now = Date.now();
    for (const t of document.querySelectorAll("time[data-ago], time[data-for]")) {
      const iso = t.getAttribute("datetime");
      const text = t.hasAttribute("data-for") ? since(iso, now) : ago(iso, now);
      if (t.textContent !== text) t.textContent = text;
    }
  }
  window.trainwatchTimes = update;
  setInterval(update, 15000);
})();
