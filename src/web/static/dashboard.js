// The monitors list, live: every few seconds the server renders the rows for the filter
// on screen (/?part=rows&…) and they replace the old ones in place: no reload, the scroll
// position and the ticked boxes kept. The markup comes from our own server, which escaped
// every text in it. The search box narrows the rows as one types (the server's `q` does
// the same for a reload, or with JavaScript off). Bulk pause/resume counts the ticks.
(function () {
  const kRefreshMs = 3000;
  const rows = document.getElementById("rows");
  if (!rows) return;
  const search = document.getElementById("q");
  const form = document.getElementById("filters");
  const picked = document.getElementById("picked");
  const back = document.getElementById("bulk-back");

  function query() {
    const params = new URLSearchParams(new FormData(form));
    for (const [k, v] of [...params.entries()]) if (!v) params.delete(k);
    return params;
  }

  function applySearch() {
    const needle = (search.value || "").trim().toLowerCase();
    let shown = 0;
    for (const row of rows.querySelectorAll("tr.mon")) {
      const hit = !needle || row.dataset.search.includes(needle);
      row.hidden = !hit;
      if (hit) shown++;
    }
    for (const body of rows.querySelectorAll("tbody[data-group]")) {
      body.hidden = !body.querySelector("tr.mon:not([hidden])");
    }
    return shown;
  }

  function countPicked() {
    if (!picked) return;
    const n = rows.querySelectorAll('input[name^="pick."]:checked').length;
    picked.textContent = n ? n + (n === 1 ? " monitor selected" : " monitors selected")
                           : "Select monitors to pause or resume them together.";
  }

  function wire() {
    const all = document.getElementById("pick-all");
    if (all) all.addEventListener("change", () => {
      for (const box of rows.querySelectorAll('tr.mon:not([hidden]) input[name^="pick."]')) box.checked = all.checked;
      countPicked();
    });
    applySearch();
  }

  async function refresh() {
    if (document.hidden) return;
    try {
      const params = query();
      params.delete("q");  // searched here, so a keystroke never waits for the server
      params.set("part", "rows");
      const response = await fetch("/?" + params.toString(), { headers: { Accept: "text/html" } });
      if (!response.ok) return;
      const html = await response.text();
      const ticked = new Set([...rows.querySelectorAll('input[name^="pick."]:checked')].map(b => b.value));
      const focused = document.activeElement && rows.contains(document.activeElement) && document.activeElement.closest("tr.mon");
      const focusName = focused ? focused.dataset.monitor : null;
      rows.innerHTML = html;
      wire();
      for (const box of rows.querySelectorAll('input[name^="pick."]')) box.checked = ticked.has(box.value);
      if (focusName) {
        const row = rows.querySelector('tr.mon[data-monitor="' + CSS.escape(focusName) + '"] a');
        if (row) row.focus({ preventScroll: true });
      }
      countPicked();
      if (window.trainwatchTimes) window.trainwatchTimes();
    } catch (e) { /* the next tick tries again */ }
  }

  if (search) search.addEventListener("input", applySearch);
  rows.addEventListener("change", countPicked);
  if (back) back.value = "/" + (location.search || "");
  wire();
  setInterval(refresh, kRefreshMs);
})();
