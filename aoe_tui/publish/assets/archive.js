// The archive's filter: rows whose text holds every word typed, of the chosen arena and outcome.
(function () {
  "use strict";
  const words = document.getElementById("filter");
  const arena = document.getElementById("filter-arena");
  function apply() {
    const wanted = words.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    document.querySelectorAll("#archive-rows tr").forEach((row) => {
      const text = row.textContent.toLowerCase();
      const keep = wanted.every((w) => text.includes(w)) && (!arena.value || row.dataset.arena === arena.value);
      row.hidden = !keep;
      if (keep) shown++;
    });
    document.getElementById("archive-count").textContent = String(shown);
  }
  words.addEventListener("input", apply);
  arena.addEventListener("change", apply);
  apply();
  document.documentElement.dataset.ready = "true";
})();
