// The capture table of the selected session: one row per capture, sorted by seq, keyed
// by capture id so that a record arriving again (retained, after a reconnect) updates
// its row in place instead of adding one. A row opens the capture's detail.

import { clock, count, pct } from "./format.js";
import { coalesce, fill, h } from "./dom.js";

const OUTCOME = {
  done: "done",
  failed: "failed",
  timeout: "timeout",
  interrupted: "interrupted",
  aborted: "aborted",
  recording: "recording",
  captured: "identifying",
};

/**
 * What a capture's row says when there is no record yet (a capture outside any session,
 * or the live documents arriving first): the lifecycle documents and results tell.
 */
export function captureStatus(c) {
  if (c.record && typeof c.record.status === "string") return c.record.status;
  const stop = c.docs.stop;
  if (stop) {
    if (stop.exit_status === "success") return Object.keys(c.results).length ? "done" : "captured";
    return stop.exit_status || "failed";
  }
  if (c.docs.start || c.docs.progress) return "recording";
  return Object.keys(c.results).length ? "done" : "recording";
}

export function captureStart(c) {
  return (c.record && c.record.started_utc) || (c.docs.start && c.docs.start.time) || null;
}

export function createCaptures({ store }) {
  const table = document.getElementById("captures");
  const headRow = table.tHead.rows[0];
  const tbody = table.tBodies[0];
  const summary = document.getElementById("captures-summary");
  const rows = new Map(); // capture_id -> tr
  const rowSig = new WeakMap(); // tr -> the texts it shows
  let joints = [];

  const render = coalesce(renderAll);
  for (const kind of ["captures", "session-selected", "method", "capture-open"]) store.on(kind, render);

  function open(id) {
    store.openCapture(id);
  }

  function rowFor(id) {
    let tr = rows.get(id);
    if (!tr) {
      tr = h("tr", {
        tabindex: "0",
        dataset: { captureId: id },
        onclick: () => open(id),
        onkeydown: (ev) => {
          if (ev.key === "Enter" || ev.key === " ") {
            ev.preventDefault();
            open(id);
          }
        },
      });
      rows.set(id, tr);
    }
    return tr;
  }

  function renderAll() {
    const list = store.sessionCaptures(store.state.selectedSessionId);
    const method = store.methodFor(list);

    // the fit columns: every joint the shown method reports for this session
    const js = new Set();
    for (const c of list) {
      const r = method && c.results[method];
      if (r) for (const j of Object.keys(r.fit_percent)) js.add(j);
    }
    const newJoints = [...js];
    if (newJoints.join("\n") !== joints.join("\n") || !headRow.cells.length) {
      joints = newJoints;
      fill(headRow,
        h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "start"),
        h("th", { scope: "col" }, "outcome"), h("th", { scope: "col" }, "reason"),
        h("th", { scope: "col", title: "lost samples / gaps" }, "lost / gaps"),
        joints.map((j) => h("th", { scope: "col", class: "num" }, `fit ${j}`)));
    }

    const keep = new Set();
    list.forEach((c, i) => {
      const tr = rowFor(c.capture_id);
      keep.add(c.capture_id);
      fillRow(tr, c, method);
      if (tbody.rows[i] !== tr) tbody.insertBefore(tr, tbody.rows[i] || null);
    });
    for (const [id, tr] of rows) {
      if (!keep.has(id)) {
        tr.remove();
        rows.delete(id);
      }
    }
    if (!list.length) {
      if (!tbody.querySelector(".empty")) {
        tbody.append(h("tr", { class: "empty" }, h("td", { colspan: 5 + joints.length, class: "muted" }, "no captures yet")));
      }
    } else {
      const empty = tbody.querySelector(".empty");
      if (empty) empty.remove();
    }

    const n = {};
    for (const c of list) {
      const s = captureStatus(c);
      n[s] = (n[s] || 0) + 1;
    }
    summary.textContent = list.length
      ? [`${list.length} captures`, ...Object.entries(n).map(([s, k]) => `${k} ${OUTCOME[s] || s}`)].join(" · ") +
        (method ? ` · fit of ${method}` : "")
      : "";
  }

  function fillRow(tr, c, method) {
    const rec = c.record || {};
    const stop = c.docs.stop || {};
    const status = captureStatus(c);
    const lost = rec.lost_samples ?? stop.lost_samples;
    const gaps = rec.gaps ?? stop.gaps;
    const reason = rec.reason ?? stop.reason ?? "";
    const r = method ? c.results[method] : null;
    const isOpen = c.capture_id === store.state.openCaptureId;
    tr.dataset.status = status;
    tr.dataset.seq = c.seq == null ? "" : String(c.seq);
    tr.className = isOpen ? "open" : "";
    tr.setAttribute("aria-selected", isOpen ? "true" : "false");
    const texts = [
      c.seq == null ? "—" : String(c.seq),
      clock(captureStart(c)),
      OUTCOME[status] || status,
      reason || "",
      `${count(lost)} / ${count(gaps)}`,
      ...joints.map((j) => (r ? pct(r.fit_percent[j]) : "—")),
    ];
    // a progress message re-renders the table once a second: leave unchanged rows alone
    const sig = `${status}\n${texts.join("\n")}`;
    if (rowSig.get(tr) === sig) return;
    rowSig.set(tr, sig);
    tr.title = `capture ${c.capture_id}: open its detail`;
    fill(tr,
      h("td", { class: "num" }, texts[0]),
      h("td", null, texts[1]),
      h("td", null, h("span", { class: "badge", dataset: { state: status } }, texts[2])),
      h("td", { class: "reason" }, texts[3]),
      h("td", { class: "num" }, texts[4]),
      texts.slice(5).map((t) => h("td", { class: "num" }, t)));
  }
}
