// The dashboard's forms, where a choice changes what else may be chosen:
//  - the monitor and channel forms show only the fields of the chosen type (each lists its
//    types in data-types); with JavaScript off every field shows, saying which types it is for;
//  - the token form offers roles up to the picked owner's (the server refuses more anyway).
(function () {
  const owner = document.getElementById("t-owner"), role = document.getElementById("t-role");
  if (owner && role) {
    const rank = { viewer: 0, editor: 1, admin: 2 };
    const limit = () => {
      const max = rank[owner.selectedOptions[0] ? owner.selectedOptions[0].dataset.role : "viewer"];
      for (const option of role.options) {
        option.disabled = option.value !== "" && rank[option.value] > max;
        if (option.disabled && option.selected) role.value = "";
      }
    };
    owner.addEventListener("change", limit);
    limit();
  }
})();
(function () {
  const type = document.getElementById("n-type") || document.getElementById("c-type");
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
