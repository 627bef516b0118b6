// The replay of a published match page: no network, no library. It reads the events embedded in
// #replay-data, folds the milestone events up to the cursor exactly as the reducer does, and updates the
// territory panels (data-state), the service map, the event list and the race chart's cursor.
// #t=SECONDS opens the page at that moment. Every player string is set as text, never as markup.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const root = document.documentElement;
  const LIST_ROWS = 120;
  let log = null;
  let cursor = data.duration_ms;
  let playing = false;
  let lastFrame = 0;
  let timer = null;

  function decode(encoded) {
    if (encoded.encoding === "json") return Promise.resolve(JSON.parse(encoded.body));
    const bytes = Uint8Array.from(atob(encoded.body), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function clock(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  // The number of events at or before `ms` (binary search on the non-decreasing times).
  function countAt(ms) {
    const t = log.t;
    let lo = 0, hi = t.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (t[mid] <= ms) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  let milestoneEvents = [];
  function prepare() {
    const wanted = {};
    data.milestone_kinds.forEach((kind) => { wanted[log.kinds.indexOf(kind)] = kind; });
    delete wanted[-1];
    for (let i = 0; i < log.t.length; i++) {
      const kind = wanted[log.k[i]];
      if (kind !== undefined && log.r[i] >= 0 && log.m[i] >= 0) milestoneEvents.push([i, kind]);
    }
  }

  // The reducer's milestone fold: evaluating, passed, failure; then the state the page shows.
  function milestoneStates(count) {
    const states = {};
    for (const [i, kind] of milestoneEvents) {
      if (i >= count) break;
      const key = log.strings[log.r[i]] + "\u0000" + log.strings[log.m[i]];
      const m = states[key] || (states[key] = {evaluating: false, passed: false, failed: false});
      if (kind === "milestone_evaluation_started") m.evaluating = true;
      else if (kind === "milestone_passed") { m.passed = true; m.evaluating = false; m.failed = false; }
      else if (kind === "milestone_failed") { m.evaluating = false; m.failed = true; }
      else if (kind === "milestone_revoked") { m.passed = false; m.evaluating = false; m.failed = true; }
    }
    return states;
  }

  function stateOf(m) {
    if (!m) return "pending";
    if (m.passed) return "passed";
    if (m.evaluating) return "evaluating";
    if (m.failed) return "failed";
    return "pending";
  }

  function renderMilestones(count) {
    const states = milestoneStates(count);
    document.querySelectorAll("[data-milestone][data-territory]").forEach((el) => {
      const m = states[el.dataset.territory + "\u0000" + el.dataset.milestone];
      el.dataset.state = stateOf(m);
      const label = el.querySelector(".state");
      if (label) label.textContent = el.dataset.state;
    });
    const select = document.getElementById("map-territory");
    if (select) {
      const territory = select.value;
      document.querySelectorAll("#service-map [data-node]").forEach((node) => {
        const milestone = node.dataset.nodeMilestone;
        if (!milestone) return;
        const m = states[territory + "\u0000" + milestone];
        node.dataset.state = stateOf(m);
        const hidden = data.fog && !m;
        node.classList.toggle("unmapped", hidden);
        node.querySelector("text").textContent = hidden ? "unmapped" : node.dataset.name;
      });
      document.querySelectorAll("#service-map [data-link]").forEach((link) => {
        const ends = [link.dataset.from, link.dataset.to].map((id) => document.querySelector('#service-map [data-node="' + CSS.escape(id) + '"]'));
        link.style.display = ends.some((n) => n && n.classList.contains("unmapped")) ? "none" : "";
      });
    }
  }

  function renderList(count) {
    const body = document.getElementById("event-rows");
    if (!body) return;
    const rows = document.createDocumentFragment();
    const first = Math.max(0, count - LIST_ROWS);
    for (let i = first; i < count; i++) {
      const tr = document.createElement("tr");
      for (const text of [String(i), clock(log.t[i]), log.strings[log.a[i]] || "", log.kinds[log.k[i]], log.strings[log.s[i]] || ""]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.appendChild(td);
      }
      rows.appendChild(tr);
    }
    body.replaceChildren(rows);
    const wrap = body.closest(".event-scroll");
    if (wrap) wrap.scrollTop = wrap.scrollHeight;
  }

  function render() {
    const count = countAt(cursor);
    root.dataset.cursorMs = String(Math.round(cursor));
    document.getElementById("scrub").value = String(Math.round(cursor));
    document.getElementById("clock").textContent = clock(cursor) + " / " + clock(data.duration_ms) + " · event " + count + "/" + log.t.length;
    renderMilestones(count);
    renderList(count);
    const line = document.getElementById("race-cursor");
    if (line) {
      const x = (cursor / Math.max(1, data.duration_ms)) * Number(line.dataset.width);
      line.setAttribute("x1", x); line.setAttribute("x2", x);
    }
  }

  function seek(ms) {
    cursor = Math.min(Math.max(0, ms), data.duration_ms);
    render();
  }

  function fromHash() {
    const found = /(?:^#|&)t=([0-9.]+)/.exec(location.hash);
    if (found) seek(Math.round(parseFloat(found[1]) * 1000));
  }

  function frame(now) {
    if (!playing) return;
    const speed = Number(document.getElementById("speed").value);
    cursor = Math.min(data.duration_ms, cursor + (now - lastFrame) * speed);
    lastFrame = now;
    render();
    if (cursor >= data.duration_ms) setPlaying(false);
    else timer = requestAnimationFrame(frame);
  }

  function setPlaying(on) {
    playing = on;
    const button = document.getElementById("play");
    button.textContent = on ? "❚❚ pause" : "▶ play";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    if (on) {
      if (cursor >= data.duration_ms) cursor = 0;
      lastFrame = performance.now();
      timer = requestAnimationFrame(frame);
    } else if (timer !== null) {
      cancelAnimationFrame(timer);
      timer = null;
    }
  }

  function wire() {
    const scrub = document.getElementById("scrub");
    scrub.max = String(data.duration_ms);
    scrub.addEventListener("input", () => { setPlaying(false); seek(Number(scrub.value)); });
    document.getElementById("play").addEventListener("click", () => setPlaying(!playing));
    document.querySelectorAll("[data-seek]").forEach((el) => el.addEventListener("click", (e) => {
      e.preventDefault(); setPlaying(false); seek(Number(el.dataset.seek));
    }));
    document.getElementById("prev-marker").addEventListener("click", () => {
      const before = data.markers.filter((m) => m[0] < cursor - 1);
      seek(before.length ? before[before.length - 1][0] : 0);
    });
    document.getElementById("next-marker").addEventListener("click", () => {
      const after = data.markers.find((m) => m[0] > cursor + 1);
      seek(after ? after[0] : data.duration_ms);
    });
    const select = document.getElementById("map-territory");
    if (select) select.addEventListener("change", render);
    window.addEventListener("hashchange", fromHash);
    document.addEventListener("keydown", (e) => {
      if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName) && e.target.type !== "range") return;
      if (e.key === " ") { e.preventDefault(); setPlaying(!playing); }
      else if (e.key === "Home") seek(0);
      else if (e.key === "End") seek(data.duration_ms);
    });
  }

  window.aoeReplay = {
    seek: seek,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
    get cursor() { return cursor; },
    get playing() { return playing; },
    passed: () => Array.from(document.querySelectorAll('[data-milestone][data-state="passed"]')).map((el) => el.dataset.territory + "/" + el.dataset.milestone).sort(),
  };

  decode(data.log).then((columns) => {
    log = columns;
    prepare();
    wire();
    render();
    fromHash();
    root.dataset.ready = "true";
  });
})();
