// kubectl deltas -o html: zoom, pan and a brush on the time axis, a key filter, folding namespace
// groups and the hover panel. The page is complete without it: every mark has its <title>.
(function () {
  "use strict";
  const svg = document.getElementById("chart");
  if (!svg) return;
  const NS = "http://www.w3.org/2000/svg";
  const plotX = +svg.dataset.plotX, top = +svg.dataset.top;
  let plotW = +svg.dataset.plotW;
  const full = { from: +svg.dataset.from, to: +svg.dataset.to };
  const view = { from: full.from, to: full.to };
  const records = JSON.parse(document.getElementById("kd-records").textContent);
  const tip = document.getElementById("tip");
  const brush = document.getElementById("brush");
  const collapsed = new Set();
  let filter = "";
  let pinned = null;

  const xOf = (t) => plotX + (t - view.from) / (view.to - view.from) * plotW;
  const tOf = (x) => view.from + (x - plotX) / plotW * (view.to - view.from);
  const fixed = (n) => (Math.round(n * 10) / 10).toString();

  // Everything placed in time, found once.
  const placed = Array.from(svg.querySelectorAll("[data-t]"));
  const series = Array.from(svg.querySelectorAll("polyline[data-p]")).map((line) => ({
    line,
    points: line.dataset.p.split(" ").map((p) => p.split(",").map(Number)),
  }));

  function redraw() {
    for (const el of placed) {
      const x = xOf(+el.dataset.t);
      if (el.classList.contains("m")) {
        el.setAttribute("transform", "translate(" + fixed(x) + "," + el.dataset.y + ")");
        if (el.classList.contains("agg")) {
          el.querySelector("rect").setAttribute("width", fixed(xOf(+el.dataset.u) - x + 6));
        }
      } else if (el.tagName === "rect") {
        el.setAttribute("x", fixed(x));
        el.setAttribute("width", fixed(Math.max(1, xOf(+el.dataset.u) - x)));
      } else {
        el.setAttribute("x", fixed(x + 2));
      }
    }
    for (const s of series) {
      s.line.setAttribute("points", s.points.map((p) => fixed(xOf(p[0])) + "," + p[1]).join(" "));
    }
    declutter();
    ticks();
  }

  // The chart takes the page's whole width: the plot grows with the window, labels and marks
  // keep their size.
  const margin = svg.viewBox.baseVal.width - plotX - plotW;
  function fit() {
    const width = Math.max(plotX + margin + 200, Math.floor(svg.parentNode.clientWidth));
    if (Math.abs(width - svg.viewBox.baseVal.width) < 1) return false;
    plotW = width - plotX - margin;
    svg.setAttribute("width", width);
    svg.setAttribute("viewBox", "0 0 " + width + " " + svg.viewBox.baseVal.height);
    svg.dataset.plotW = plotW;
    for (const el of svg.querySelectorAll("#plot rect, .axis-bg")) el.setAttribute("width", plotW);
    for (const el of svg.querySelectorAll("line.sep")) el.setAttribute("x2", width);
    for (const el of svg.querySelectorAll("line.rule")) el.setAttribute("x2", plotX + plotW);
    return true;
  }

  // A label is shown where it fits: inside its span, or before the next mark of its lane.
  function declutter() {
    for (const label of svg.querySelectorAll("text.sl")) {
      const room = xOf(+label.dataset.u) - xOf(+label.dataset.t);
      label.classList.remove("hidden");
      label.classList.toggle("hidden", room < label.getComputedTextLength() + 4);
    }
    for (const label of svg.querySelectorAll(".m > text.ml")) {
      const mark = label.parentNode;
      let next = mark.nextElementSibling;
      while (next && !next.classList.contains("m")) next = next.nextElementSibling;
      let room = next ? xOf(+next.dataset.t) - xOf(+mark.dataset.t) : Infinity;
      // The Reflector's layers: a label makes way for the marks drawn over it too.
      const layer = mark.parentNode.classList.contains("layer") ? +mark.parentNode.dataset.rank : null;
      if (layer !== null) {
        for (const above of mark.parentNode.parentNode.querySelectorAll("g.layer")) {
          if (+above.dataset.rank <= layer) continue;
          for (const other of above.querySelectorAll(".m")) {
            if (+other.dataset.t >= +mark.dataset.t) {
              room = Math.min(room, xOf(+other.dataset.t) - xOf(+mark.dataset.t));
            }
          }
        }
      }
      label.classList.remove("hidden");
      label.classList.toggle("hidden", room < +label.getAttribute("x") + label.getComputedTextLength() + 4);
    }
  }

  function step(span) {
    const raw = span / 10, power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
    return 10 * power;
  }

  function label(ms, s) {
    if (Math.abs(ms) < 1e-9) return "0";
    if (s < 1000 && ms < 1000) return "+" + Math.round(ms) + "ms";
    if (s < 1000) return "+" + (ms / 1000).toFixed(Math.ceil(Math.log10(1000 / s))) + "s";
    const sec = ms / 1000;
    if (sec >= 60 && s >= 60000) {
      const m = Math.floor(sec / 60), rest = sec - m * 60;
      return Math.abs(rest) < 1e-6 ? "+" + m + "m" : "+" + m + "m" + Math.round(rest) + "s";
    }
    return Math.abs(sec - Math.round(sec)) < 1e-6 ? "+" + Math.round(sec) + "s" : "+" + sec.toFixed(1) + "s";
  }

  function ticks() {
    const axis = document.getElementById("axis");
    for (const old of Array.from(axis.querySelectorAll(".tick"))) old.remove();
    const s = step(view.to - view.from);
    const height = svg.getAttribute("height");
    for (let ms = Math.ceil(view.from / s) * s; ms <= view.to; ms += s) {
      const g = document.createElementNS(NS, "g");
      g.setAttribute("class", "tick");
      const x = fixed(xOf(ms));
      const line = document.createElementNS(NS, "line");
      for (const [k, v] of [["x1", x], ["x2", x], ["y1", top - 6], ["y2", height]]) line.setAttribute(k, v);
      const text = document.createElementNS(NS, "text");
      text.setAttribute("x", x);
      text.setAttribute("y", 16);
      text.textContent = label(ms, s);
      g.append(line, text);
      axis.append(g);
    }
  }

  // Rows stacked again: folded groups and filtered keys take no room.
  function relayout() {
    let y = top;
    const rows = Array.from(svg.querySelectorAll("g.row"));
    const visibleInGroup = new Map();
    for (const row of rows) {
      if (!row.classList.contains("lane") || !row.dataset.g) continue;
      const match = !filter || row.dataset.key.toLowerCase().includes(filter);
      row.dataset.match = match ? "1" : "0";
      visibleInGroup.set(row.dataset.g, (visibleInGroup.get(row.dataset.g) || 0) + (match ? 1 : 0));
    }
    for (const row of rows) {
      let shown = true;
      if (row.classList.contains("group")) {
        shown = !filter || visibleInGroup.get(row.dataset.g) > 0;
        const fold = row.querySelector(".fold");
        if (fold) fold.textContent = collapsed.has(row.dataset.g) ? "▸" : "▾";
      } else if (row.classList.contains("lane") && row.dataset.g) {
        shown = row.dataset.match === "1" && !collapsed.has(row.dataset.g);
      } else if (row.classList.contains("lane")) {
        shown = !filter || row.dataset.key.toLowerCase().includes(filter);
      }
      row.style.display = shown ? "" : "none";
      if (shown) {
        row.setAttribute("transform", "translate(0," + y + ")");
        y += +row.dataset.h;
      }
    }
    const height = y + 8;
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + svg.viewBox.baseVal.width + " " + height);
    ticks();
  }

  function text(tag, content, cls) {
    const el = document.createElement(tag);
    el.textContent = content;
    if (cls) el.className = cls;
    return el;
  }

  function table(rows) {
    const t = document.createElement("table");
    for (const cells of rows) {
      const tr = document.createElement("tr");
      for (const c of cells) tr.append(text("td", c == null ? "-" : String(c)));
      t.append(tr);
    }
    return t;
  }

  // The panel of one record: a batch as -o jsonl writes it, with -o wide's changes.
  function describe(record) {
    const box = document.createElement("div");
    if (record.batch) {
      const b = record.batch;
      box.append(text("h3", "pop " + b.seq + " · " + b.resource + " · " + (b.key == null ? "*" : b.key)));
      box.append(table([
        ["time", b.time],
        ["initial list", b.initial ? "yes" : "no"],
        ["queue depth", b.queueDepth],
        ["waited", b.waitMs + " ms"],
      ]));
      box.append(text("h3", "deltas"));
      box.append(table(b.deltas.map((d) => [
        d.type + (d.tombstone ? " (tombstone)" : ""),
        d.key,
        "rv " + (d.resourceVersion == null ? "-" : d.resourceVersion),
        d.objects == null ? "" : d.objects + " objects",
      ])));
      const changes = (record.changes || []).filter((c) => c);
      if (changes.length) {
        box.append(text("h3", "changes"));
        for (const c of changes) box.append(text("pre", c));
      }
      const objects = b.deltas.filter((d) => d.object !== undefined);
      if (objects.length) {
        const last = objects[objects.length - 1];
        box.append(text("h3", "object (newest delta)"));
        box.append(text("pre", JSON.stringify(last.object, null, 2)));
      }
    } else if (record.notification) {
      const n = record.notification;
      box.append(text("h3", "handler " + n.handler + " · " + n.type + (n.isSync ? " (resync)" : "")));
      box.append(table([
        ["time", n.time],
        ["key", n.key],
        ["pop", n.seq],
        ["rv", (n.oldResourceVersion ? n.oldResourceVersion + " → " : "") + (n.newResourceVersion || "-")],
        ["delivered", n.delivered ? "yes" : "no: resync not due"],
        ["buffer depth", n.bufferDepth],
        ["waited", n.waitMs == null ? null : n.waitMs + " ms"],
      ]));
      if (n.tombstone) {
        box.append(text("p", "tombstone: OnDelete gets a cache.DeletedFinalStateUnknown {Key, Obj}, " +
          "not the object (a deletion a relist found; Obj is the last state the cache knew). Unwrap it: " +
          "if t, ok := obj.(cache.DeletedFinalStateUnknown); ok { obj = t.Obj }. A handler that only does " +
          "pod, ok := obj.(*v1.Pod) and returns when !ok silently drops this deletion.", "tombstone"));
      }
    } else if (record.reconcile) {
      const r = record.reconcile;
      box.append(text("h3", "controller " + r.controller + " · reconcile " + r.key + " · " + r.result));
      box.append(table([
        ["ended", r.time],
        ["started", r.startedAt],
        ["worker", r.worker],
        ["attempt", r.attempt],
        ["priority", r.priority == null ? null : r.priority + (r.priorityReason ? " (" + r.priorityReason + ")" : "")],
        ["queued at", r.queuedAt],
        ["latest add", r.latestAddAt],
        ["waited", r.waitMs + " ms"],
        ["took", r.durationMs + " ms"],
        ["adds absorbed", r.adds],
        ["requeued (changed while reconciling)", r.requeued ? "yes" : "no"],
        ["rv read", r.resourceVersion == null ? "gone (NotFound)" : r.resourceVersion],
        ["retry in", r.retryInMs == null ? null : r.retryInMs + " ms"],
        ["requeue after", r.requeueAfterMs == null ? null : r.requeueAfterMs + " ms"],
      ]));
    } else if (record.note) {
      const n = record.note;
      box.append(text("h3", (n.controller ? n.controller + "(kube) · " : "") + "kube-runtime note"));
      box.append(table([["time", n.time]]));
      box.append(text("p", n.text));
    } else if (record.reflector) {
      const r = record.reflector;
      box.append(text("h3", "Reflector · " + r.event));
      box.append(text("pre", JSON.stringify(r, null, 2)));
    } else if (record.push) {
      const p = record.push;
      box.append(text("h3", "push " + p.seq + " · " + p.call + " " + (p.key || "*")));
      const shown = Object.assign({}, p);
      delete shown.objects;
      box.append(text("pre", JSON.stringify(shown, null, 2)));
    }
    return box;
  }

  function show(el, x, y, pin) {
    const record = records[+el.dataset.i];
    if (record === undefined) return;
    tip.replaceChildren(describe(record));
    if (pin) tip.append(text("p", "pinned: click elsewhere or press Escape to close", "pinned"));
    tip.hidden = false;
    tip.dataset.i = el.dataset.i;
    const width = tip.offsetWidth || 300;
    tip.style.left = Math.max(4, Math.min(x + 14, window.scrollX + document.documentElement.clientWidth - width - 8)) + "px";
    tip.style.top = (y + 14) + "px";
    for (const hit of svg.querySelectorAll(".hit")) hit.classList.remove("hit");
    el.classList.add("hit");
  }

  function hide() {
    tip.hidden = true;
    for (const hit of svg.querySelectorAll(".hit")) hit.classList.remove("hit");
  }

  const target = (e) => e.target.closest && e.target.closest("[data-i]");

  svg.addEventListener("mouseover", (e) => {
    const el = target(e);
    if (el && !pinned) show(el, e.pageX || 0, e.pageY || 0, false);
  });
  svg.addEventListener("mouseout", (e) => {
    if (!pinned && target(e)) hide();
  });

  // Zoom around the pointer, pan by dragging the plot, pick a window by dragging the axis.
  svg.addEventListener("wheel", (e) => {
    const point = svg.createSVGPoint();
    point.x = e.clientX;
    point.y = e.clientY;
    const at = point.matrixTransform(svg.getScreenCTM().inverse());
    if (at.x < plotX) return;
    e.preventDefault();
    const t = tOf(at.x), factor = e.deltaY < 0 ? 1 / 1.25 : 1.25;
    const span = Math.min(full.to - full.from, Math.max(0.01, (view.to - view.from) * factor));
    view.from = t - (t - view.from) * span / (view.to - view.from);
    view.to = view.from + span;
    redraw();
  }, { passive: false });

  let drag = null;
  svg.addEventListener("mousedown", (e) => {
    const point = svg.createSVGPoint();
    point.x = e.clientX;
    point.y = e.clientY;
    const at = point.matrixTransform(svg.getScreenCTM().inverse());
    if (at.x < plotX) return;
    drag = { x: at.x, y: at.y, from: view.from, to: view.to, brush: at.y < top, moved: false };
  });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const point = svg.createSVGPoint();
    point.x = e.clientX;
    point.y = e.clientY;
    const at = point.matrixTransform(svg.getScreenCTM().inverse());
    drag.moved = drag.moved || Math.abs(at.x - drag.x) > 3;
    if (drag.brush) {
      const x = Math.max(plotX, Math.min(drag.x, at.x));
      brush.setAttribute("x", x);
      brush.setAttribute("y", 0);
      brush.setAttribute("width", Math.abs(at.x - drag.x));
      brush.setAttribute("height", svg.getAttribute("height"));
    } else {
      const shift = (at.x - drag.x) / plotW * (drag.to - drag.from);
      view.from = drag.from - shift;
      view.to = drag.to - shift;
      redraw();
    }
  });
  window.addEventListener("mouseup", (e) => {
    if (drag && drag.brush && drag.moved) {
      const x1 = +brush.getAttribute("x"), x2 = x1 + +brush.getAttribute("width");
      const from = tOf(x1), to = tOf(x2);
      if (to - from > 0.001) {
        view.from = from;
        view.to = to;
        redraw();
      }
      brush.setAttribute("width", 0);
    }
    drag = null;
  });

  function reset() {
    view.from = full.from;
    view.to = full.to;
    redraw();
  }
  svg.addEventListener("dblclick", reset);
  document.getElementById("reset").addEventListener("click", reset);

  svg.addEventListener("click", (e) => {
    const group = e.target.closest && e.target.closest("g.row.group");
    if (group) {
      if (collapsed.has(group.dataset.g)) collapsed.delete(group.dataset.g);
      else collapsed.add(group.dataset.g);
      relayout();
      return;
    }
    const el = target(e);
    if (el) {
      pinned = el;
      show(el, e.pageX || 0, e.pageY || 0, true);
    } else if (pinned) {
      pinned = null;
      hide();
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      pinned = null;
      hide();
    }
  });

  document.getElementById("filter").addEventListener("input", (e) => {
    filter = e.target.value.trim().toLowerCase();
    relayout();
  });

  // `page.html#pop=17` opens with pop 17's details pinned: a link to one batch for a bug report.
  function fromHash() {
    const match = /^#pop=(\d+)$/.exec(location.hash);
    if (!match) return;
    const index = records.findIndex((r) => r.batch && r.batch.seq === +match[1]);
    const el = index < 0 ? null : svg.querySelector('.m[data-i="' + index + '"]');
    if (el) {
      pinned = el;
      const box = el.getBoundingClientRect();
      show(el, box.left + window.scrollX, box.top + window.scrollY, true);
    }
  }

  document.getElementById("controls").hidden = false;
  if (fit()) redraw();
  window.addEventListener("resize", () => {
    if (fit()) redraw();
  });
  fromHash();
})();
