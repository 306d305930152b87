// The capture detail: what was identified from one capture (every parameter with its
// 95 % interval or why it cannot be told, the fit per joint, adequacy warnings) and the
// measured against simulated response. The overlay topic is retained and large, so it is
// subscribed only while a capture is open and dropped when it closes.

import { clock, count, duration, num, pct, plusMinusPct, sig } from "./format.js";
import { coalesce, fill, h } from "./dom.js";
import { axis, createPlot, fitSize, JOINT_COLORS, JOINT_DARK } from "./plots.js";
import { captureStart, captureStatus } from "./captures.js";

const $ = (id) => document.getElementById(id);

export function createDetail({ store, conn, prefix }) {
  const section = $("capture-detail");
  const bodyEl = $("detail-body");
  const methodSel = $("detail-method");
  const plotEl = $("overlay-plot");
  const note = $("overlay-note");
  let overlayTopic = null;
  let method = null; // the method shown; chosen again when another capture opens
  let plot = null; // { u, destroy, shape }
  let drawn = null; // the overlay object drawn, to skip redrawing the same one

  $("detail-close").addEventListener("click", () => store.openCapture(null));
  methodSel.addEventListener("change", () => {
    method = methodSel.value || null;
    renderInfo();
    renderOverlay();
  });

  store.on("capture-open", ({ to }) => {
    const topic = to ? `${prefix}/result/${to}/+/overlay` : null;
    if (overlayTopic) conn.unsubscribe(overlayTopic);
    overlayTopic = topic;
    if (topic) conn.subscribe(topic, 1);
    method = null;
    drawn = null;
    section.dataset.captureId = to || "";
    section.hidden = !to;
    if (!to) {
      destroyPlot();
      plotEl.dataset.points = "0";
      return;
    }
    renderInfo();
    renderOverlay();
    requestAnimationFrame(() => section.scrollIntoView({ block: "nearest", behavior: "smooth" }));
  });
  const later = coalesce(() => { renderInfo(); renderOverlay(); });
  store.on("captures", () => { if (store.state.openCaptureId) later(); });
  store.on("method", () => { if (store.state.openCaptureId) later(); });
  store.on("overlay", () => renderOverlay());

  function current() {
    const id = store.state.openCaptureId;
    return id ? store.state.captures.get(id) || null : null;
  }

  /** The user's pick, else the method the table shows, else the first this capture has. */
  function chooseMethod(c) {
    const methods = Object.keys(c.results).sort();
    if (method && methods.includes(method)) return method;
    const main = store.methodFor(store.sessionCaptures(c.session_id));
    if (main && methods.includes(main)) return main;
    return methods[0] || null;
  }

  function renderInfo() {
    const c = current();
    if (!c) return;
    const m = chooseMethod(c);
    const methods = Object.keys(c.results).sort();
    fill(methodSel, methods.map((x) => h("option", { value: x }, x)));
    methodSel.value = m || "";
    methodSel.disabled = methods.length < 2;

    const rec = c.record || {};
    const stop = c.docs.stop || {};
    const status = captureStatus(c);
    const facts = [
      `started ${clock(captureStart(c))}`,
      num(rec.duration_s ?? stop.duration_s) !== null ? duration(rec.duration_s ?? stop.duration_s) : null,
      num(rec.samples ?? stop.samples) !== null ? `${count(rec.samples ?? stop.samples)} samples` : null,
      `lost ${count(rec.lost_samples ?? stop.lost_samples)}`,
      `gaps ${count(rec.gaps ?? stop.gaps)}`,
    ].filter(Boolean);
    $("detail-title").textContent = c.seq != null ? `Capture ${c.seq}` : "Capture";
    const r = m ? c.results[m] : null;
    fill(bodyEl,
      h("p", { class: "detail-facts" },
        h("span", { class: "badge", dataset: { state: status } }, status === "captured" ? "identifying" : status),
        " ", facts.join(" · "),
        h("span", { class: "muted small" }, ` · ${c.capture_id}`)),
      (rec.reason || stop.reason) ? h("p", { class: "reason-line" }, rec.reason || stop.reason) : null,
      r ? resultBlock(r) : h("p", { class: "muted" }, status === "captured" || status === "recording"
        ? "no result yet: identification follows the recording" : "no identification result for this capture"));
  }

  function resultBlock(r) {
    const fits = Object.entries(r.fit_percent);
    return [
      h("p", { class: "small muted" }, `${r.method} · ${r.rig_kind}`,
        r.compute_seconds !== null ? ` · computed in ${sig(r.compute_seconds, 3)} s` : "",
        r.created_utc ? ` · ${clock(r.created_utc)}` : ""),
      h("p", { id: "detail-fit", class: "fit-line" }, h("strong", null, "fit "),
        fits.length ? fits.map(([j, v], i) => [i ? " · " : "", `${j} `, h("span", { class: "num", dataset: { joint: j } }, pct(v))])
          : "—"),
      r.warnings.length
        ? h("ul", { id: "detail-warnings", class: "warnings" }, r.warnings.map((w) => h("li", null, w)))
        : h("p", { id: "detail-warnings", class: "small ok-text" }, "no adequacy warnings"),
      h("div", { class: "table-scroll" },
        h("table", { id: "detail-parameters", class: "params" },
          h("thead", null, h("tr", null,
            h("th", { scope: "col" }, "parameter"), h("th", { scope: "col", class: "num" }, "value"),
            h("th", { scope: "col", class: "num" }, "95 % interval"), h("th", { scope: "col", class: "num" }, "±"),
            h("th", { scope: "col" }, "note"))),
          group("friction", r.parameters),
          group("rig", r.rig))),
    ];
  }

  function group(name, params) {
    const entries = Object.entries(params).filter(([, p]) => p && typeof p === "object");
    if (!entries.length) return null;
    return h("tbody", { dataset: { group: name } },
      h("tr", { class: "group" }, h("th", { colspan: 5, scope: "rowgroup" }, name)),
      entries.map(([key, p]) => paramRow(name, key, p)));
  }

  function paramRow(groupName, key, p) {
    const ci = Array.isArray(p.ci95) && p.ci95.length === 2 ? p.ci95 : null;
    const ciText = ci ? `[${sig(ci[0])}, ${sig(ci[1])}]` : "—";
    const identifiable = p.identifiable === true && num(p.value) !== null;
    const attrs = { class: identifiable ? "" : "not-identifiable",
      dataset: { parameter: key, group: groupName, identifiable: identifiable ? "true" : "false" } };
    if (identifiable) {
      return h("tr", attrs, h("th", { scope: "row" }, key), h("td", { class: "num" }, sig(p.value)),
        h("td", { class: "num ci" }, ciText), h("td", { class: "num" }, plusMinusPct(p.value, ci)),
        h("td", { class: "note" }, p.note || ""));
    }
    const assumed = num(p.assumed) !== null ? ` (the fit assumed ${sig(p.assumed)})` : "";
    return h("tr", attrs, h("th", { scope: "row" }, key),
      h("td", { class: "num" }, "not identifiable"),
      h("td", { class: "num ci" }, ci ? `data allow ${ciText}` : "—"), h("td", null, ""),
      h("td", { class: "note" }, (p.note || "the data cannot determine it") + assumed));
  }

  // --- overlay --------------------------------------------------------------------------

  function renderOverlay() {
    const c = current();
    if (!c) return;
    const m = chooseMethod(c);
    const r = m ? c.results[m] : null;
    const ov = m ? store.state.overlays.get(`${c.capture_id}/${m}`) : null;
    if (!ov) {
      destroyPlot();
      drawn = null;
      plotEl.dataset.points = "0";
      note.textContent = !r ? "" : r.overlay === false ? `${m} keeps no overlay for this capture`
        : "waiting for the overlay…";
      return;
    }
    if (ov === drawn) return;
    const data = overlayData(ov);
    if (!data) {
      destroyPlot();
      drawn = null;
      plotEl.dataset.points = "0";
      note.textContent = "the overlay could not be read";
      return;
    }
    drawn = ov;
    note.textContent = `${m}: measured (solid) and identified (dashed), ${ov.unit || "rad"}` +
      (data.segments > 1 ? `; ${data.segments} fitted segments, each simulated from its own start` : "");
    const shape = data.joints.join("\n");
    if (plot && plot.shape === shape) {
      plot.u.setData(data.columns);
    } else {
      destroyPlot();
      const series = [{ label: "t, s", value: (u, v) => (v == null ? "—" : sig(v)) }];
      data.joints.forEach((j, i) => {
        // measured: the joint's colour, light; identified: a dark shade, dashed, on top
        const k = i % JOINT_COLORS.length;
        series.push({ label: `${j} measured`, stroke: `${JOINT_COLORS[k]}99`, width: 2.5, spanGaps: false,
          value: (u, v) => (v == null ? "—" : sig(v)) });
        series.push({ label: `${j} identified`, stroke: JOINT_DARK[k], width: 1.25, dash: [5, 3], spanGaps: false,
          value: (u, v) => (v == null ? "—" : sig(v)) });
      });
      plot = createPlot(plotEl, {
        scales: { x: { time: false } },
        axes: [axis({ label: "capture time, s", labelSize: 18, labelFont: "11px system-ui" }),
          axis({ label: `angle, ${ov.unit || "rad"}`, labelSize: 18, labelFont: "11px system-ui", size: fitSize })],
        series,
      }, data.columns, 280);
      plot.shape = shape;
    }
    plotEl.dataset.points = String(data.points);
  }

  function destroyPlot() {
    if (plot) plot.destroy();
    plot = null;
  }

}

/**
 * uPlot columns from an overlay: x must be numbers in order, so a null time (the row
 * that separates two fitted segments) gets the midpoint of its neighbours with every
 * angle null, which uPlot draws as a gap. Accepts measured/simulated per joint (the
 * contract) or per time step. Returns null when the arrays do not fit together.
 */
export function overlayData(ov) {
  const t = ov.t_s;
  const joints = Array.isArray(ov.joints) ? ov.joints.map(String) : null;
  if (!Array.isArray(t) || !joints || !joints.length) return null;
  const meas = perJoint(ov.measured, joints.length, t.length);
  const simu = perJoint(ov.simulated, joints.length, t.length);
  if (!meas || !simu) return null;
  const x = [];
  const cols = joints.flatMap(() => [[], []]);
  let points = 0;
  let segments = 1;
  for (let k = 0; k < t.length; k++) {
    let tk = num(t[k]);
    const isGap = tk === null;
    if (isGap) {
      const prev = x.length ? x[x.length - 1] : null;
      const next = t.slice(k + 1).find((v) => num(v) !== null);
      if (prev === null || next === undefined) continue;
      tk = (prev + next) / 2;
      segments++;
    } else {
      points++;
    }
    x.push(tk);
    for (let j = 0; j < joints.length; j++) {
      cols[2 * j].push(isGap ? null : num(meas[j][k]));
      cols[2 * j + 1].push(isGap ? null : num(simu[j][k]));
    }
  }
  return { joints, columns: [x, ...cols], points, segments };
}

function perJoint(a, nj, nt) {
  if (!Array.isArray(a)) return null;
  if (a.length === nj && a.every((row) => Array.isArray(row) && row.length === nt)) return a;
  if (a.length === nt && a.every((row) => Array.isArray(row) && row.length === nj)) {
    return Array.from({ length: nj }, (_, j) => a.map((row) => row[j]));
  }
  return null;
}
