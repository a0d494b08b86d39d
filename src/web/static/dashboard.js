// Live updates for the monitors list: every few seconds the state pills and errors of the
// rows on screen are refreshed from /api/v1/monitors, in place (no reload, scroll kept).
// Text goes in through textContent only, never innerHTML.
(function () {
  const kRefreshMs = 5000;
  const words = { up: ["\u2713", "Up"], down: ["\u2715", "Down"], pending: ["\u2026", "Pending"], paused: ["\u275a\u275a", "Paused"] };
  async function refresh() {
    try {
      const response = await fetch("/api/v1/monitors", { headers: { Accept: "application/json" } });
      if (!response.ok) return;
      const body = await response.json();
      const list = Array.isArray(body) ? body : body.monitors || [];
      for (const m of list) {
        const row = document.querySelector('tr[data-monitor="' + CSS.escape(m.name) + '"]');
        if (!row) continue;
        const pill = row.querySelector('[data-field="status"]');
        const [icon, word] = words[m.status] || ["?", m.status];
        pill.className = "pill pill-" + m.status;
        pill.replaceChildren();
        const i = document.createElement("span");
        i.setAttribute("aria-hidden", "true");
        i.textContent = icon;
        pill.append(i, " " + word);
        row.querySelector('[data-field="error"]').textContent = m.last_error || "";
      }
    } catch (e) { /* the next tick tries again */ }
  }
  setInterval(refresh, kRefreshMs);
})();
