// The monitor form: only the fields of the chosen type show (each lists its types in
// data-types); with JavaScript off every field shows, each saying which types it is for.
(function () {
  const type = document.getElementById("n-type");
  if (!type) return;
  function show() {
    for (const field of document.querySelectorAll(".field[data-types]")) {
      const on = field.dataset.types.split(" ").includes(type.value);
      field.hidden = !on;
      for (const input of field.querySelectorAll("input, select, textarea")) input.disabled = !on;
    }
    for (const span of document.querySelectorAll(".for-types")) span.hidden = true;
  }
  type.addEventListener("change", show);
  show();
})();
