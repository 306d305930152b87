// The trend: every identified parameter of the selected session against capture start
// time, one small plot each, with its 95 % interval as a vertical bar (drawn by a uPlot
// hook: uPlot has no error bars). This is the picture of friction drifting over a night.
// Once the session's captures are put together (session/<id>/result), each plot gets the
// session's estimate as a band behind the points (along its trend where the level
// drifted), and the verdict is said in words above the plots.
// Plots are keyed by parameter and updated with setData, never rebuilt per message.

import { parseTime, plusMinusPct, sig } from "./format.js";
import { coalesce, fill, h } from "./dom.js";
import { axis, clockTicks, createPlot, fitSize, JOINT_COLORS, valueTicks } from "./plots.js";
import { captureStart } from "./captures.js";

const $ = (id) => document.getElementById(id);
const PLOT_HEIGHT = 150;

/**
 * The trend's rows for one method: per parameter (friction first, then rig, in the order
 * the results list them), the captures with their value and interval. Export uses it too.
 */
export function trendRows(captures, method) {
  const names = new Map(); // name -> group
  const rows = [];
  for (const c of captures) {
    const r = method ? c.results[method] : null;
    if (!r) continue;
    for (const [group, params] of [["friction", r.parameters], ["rig", r.rig]]) {
      for (const [name, p] of Object.entries(params)) {
        if (!p || typeof p !== "object") continue;
        if (!names.has(name)) names.set(name, group);
        const ci = Array.isArray(p.ci95) && p.ci95.length === 2 ? p.ci95 : [null, null];
        rows.push({
          capture: c, name, group,
          value: typeof p.value === "number" && Number.isFinite(p.value) ? p.value : null,
          lo: typeof ci[0] === "number" ? ci[0] : null,
          hi: typeof ci[1] === "number" ? ci[1] : null,
          identifiable: p.identifiable === true,
          note: typeof p.note === "string" ? p.note : "",
        });
      }
    }
  }
  return { names, rows };
}

export function createTrend({ store }) {
  const container = $("trend-plots");
  const methodSel = $("trend-method");
  const noteEl = $("trend-note");
  const verdictEl = $("trend-verdict");
  const plots = new Map(); // name -> { el, count, plot, holder, sig }

  methodSel.addEventListener("change", () => store.setMethod(methodSel.value || null));
  const render = coalesce(renderAll);
  for (const kind of ["captures", "session-selected", "method", "session-result"]) store.on(kind, render);

  function renderAll() {
    const list = store.sessionCaptures(store.state.selectedSessionId);
    const method = store.methodFor(list);

    const methods = [...new Set(list.flatMap((c) => Object.keys(c.results)))].sort();
    if ([...methodSel.options].map((o) => o.value).join("\n") !== methods.join("\n")) {
      fill(methodSel, methods.map((m) => h("option", { value: m }, m)));
    }
    methodSel.value = method || "";
    methodSel.disabled = methods.length < 2;

    const answer = sessionAnswer(method);
    verdictEl.hidden = !answer;
    verdictEl.textContent = answer ? `Session: ${answer.summary}` : "";
    verdictEl.dataset.verdict = answer ? answer.verdict : "";
    const mid = answer ? covariateMid(answer, list) : null;

    const { names, rows } = trendRows(list, method);
    const series = new Map(); // name -> [{x, value, lo, hi}]
    for (const r of rows) {
      if (!r.identifiable || r.value === null) continue;
      const t = parseTime(captureStart(r.capture));
      if (!t) continue;
      if (!series.has(r.name)) series.set(r.name, []);
      series.get(r.name).push({ x: t.getTime() / 1000, value: r.value, lo: r.lo, hi: r.hi, group: r.group, note: r.note });
    }

    // parameters identifiable in at least one capture, in the results' order
    const shown = [...names.keys()].filter((n) => series.has(n));
    noteEl.textContent = method
      ? `${method}: ${shown.length} parameters identified in ${new Set(rows.map((r) => r.capture)).size} captures` +
        (names.size > shown.length ? `; not identifiable in any: ${[...names.keys()].filter((n) => !series.has(n)).join(", ")}` : "") +
        " · bars: 95 % interval"
      : "no identification results in this session yet";

    shown.forEach((name, i) => {
      const pts = series.get(name).sort((a, b) => a.x - b.x);
      const entry = plots.get(name) || makeEntry(name, names.get(name), pts[0]);
      if (container.children[i] !== entry.el) container.insertBefore(entry.el, container.children[i] || null);
      update(entry, pts, answer ? bandFor(answer, name, mid) : null);
    });
    for (const [name, entry] of plots) {
      if (!shown.includes(name)) {
        entry.plot.destroy();
        entry.el.remove();
        plots.delete(name);
      }
    }
  }

  function makeEntry(name, group, first) {
    // a rig quantity's note starts with its unit ("kg m: ..."): show it in the title
    const unit = group === "rig" && first && first.note.includes(":") ? first.note.split(":")[0] : "";
    const countEl = h("span", { class: "muted small" });
    const plotEl = h("div", { class: "plot" });
    const el = h("div", { class: "trend-plot", dataset: { parameter: name, points: "0", group } },
      h("div", { class: "trend-title" }, h("strong", null, name), unit ? h("span", { class: "muted small" }, ` ${unit}`) : null,
        " ", countEl),
      plotEl);
    container.append(el); // must be in the page to have a width
    const holder = { lo: [], hi: [], values: [], band: null };
    const color = group === "rig" ? JOINT_COLORS[2] : JOINT_COLORS[0];
    const plot = createPlot(plotEl, {
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      scales: {
        x: { time: true },
        y: { range: (u, min, max) => yRange(holder, min, max) },
      },
      axes: [axis({ size: 30, values: clockTicks, space: 60 }),
        axis({ size: fitSize, values: valueTicks })],
      series: [{}, {
        label: name, stroke: color, width: 1, points: { show: true, size: 6, fill: color },
      }],
      hooks: { drawClear: [(u) => drawBand(u, holder, color)], draw: [(u) => drawIntervals(u, holder, color)] },
    }, [[], []], PLOT_HEIGHT);
    const entry = { el, countEl, plot, holder, sig: "" };
    plots.set(name, entry);
    return entry;
  }

  /** The session's answer for the selected session, if its captures' method is shown. */
  function sessionAnswer(method) {
    const id = store.state.selectedSessionId;
    const answer = id ? store.state.sessionResults.get(id) : null;
    if (!answer || (method && answer.capture_method !== method)) return null;
    return answer;
  }

  function update(entry, pts, band) {
    const sigText = pts.map((p) => `${p.x},${p.value},${p.lo},${p.hi}`).join(";") +
      (band ? `|${band.value},${band.lo},${band.hi},${band.perHour},${band.mid}` : "");
    entry.el.dataset.points = String(pts.length);
    entry.el.dataset.band = band ? (band.perHour ? "trend" : "flat") : "";
    if (sigText === entry.sig) return;
    entry.sig = sigText;
    entry.holder.band = band;
    entry.holder.lo = pts.map((p) => p.lo);
    entry.holder.hi = pts.map((p) => p.hi);
    entry.holder.values = pts.map((p) => p.value);
    const last = pts[pts.length - 1];
    entry.countEl.textContent = `${pts.length} captures · last ${sig(last.value)} ${plusMinusPct(last.value, [last.lo, last.hi])}`;
    entry.plot.u.setData([pts.map((p) => p.x), pts.map((p) => p.value)]);
  }

  /** The plots in page order, for the PNG export. */
  function canvases() {
    return [...container.querySelectorAll(".trend-plot")].map((el) => {
      const entry = plots.get(el.dataset.parameter);
      return { title: el.querySelector(".trend-title").textContent, canvas: entry.plot.u.ctx.canvas };
    });
  }

  return { canvases };
}

/**
 * When the covariate's mean falls, in epoch seconds: the captures the answer pooled give
 * the session's start (their start time less their hours); null without the hours.
 */
function covariateMid(answer, list) {
  if (answer.covariate !== "hours") return null;
  const included = (answer.captures || []).filter((c) => c.included && typeof c.x === "number");
  if (!included.length) return null;
  const meanX = included.reduce((s, c) => s + c.x, 0) / included.length;
  for (const c of included) {
    const capture = list.find((k) => k.capture_id === c.capture_id);
    const t = capture ? parseTime(captureStart(capture)) : null;
    if (t) return t.getTime() / 1000 - c.x * 3600 + meanX * 3600;
  }
  return null;
}

/** The session's estimate of one parameter as a band: flat, or along its trend. */
function bandFor(answer, name, mid) {
  const p = (answer.parameters || {})[name] || (answer.rig || {})[name];
  if (!p || typeof p.value !== "number" || !Array.isArray(p.ci95)) return null;
  const [lo, hi] = p.ci95;
  if (typeof lo !== "number" || typeof hi !== "number") return null;
  const slope = ((answer.drift || {}).slopes || {})[name];
  const moved = answer.verdict === "drift" && slope && slope.moved && mid !== null;
  // the trend is a line through the level's values, its slope a fraction of the level at
  // the session's mean time per hour: the band follows 1 + b (t - mid)
  return { value: p.value, lo, hi, perHour: moved ? slope.per_unit : 0, mid };
}

/**
 * The band's level at t (s) over its level at the session's mean time: 1 + b (t - mid),
 * b the slope per hour as a fraction of that level (a line through the level's values).
 */
export function bandScale(band, t) {
  return band.perHour ? 1 + (band.perHour * (t - band.mid)) / 3600 : 1;
}

/** The band behind the points, across the plot, in a light shade of the series' color. */
function drawBand(u, holder, color) {
  const b = holder.band;
  const x0 = u.scales.x.min;
  const x1 = u.scales.x.max;
  if (!b || typeof x0 !== "number" || typeof x1 !== "number") return;
  const ts = [x0, x1]; // straight, flat or along the trend
  const ctx = u.ctx;
  ctx.save();
  ctx.globalAlpha = 0.15;
  ctx.fillStyle = color;
  // through (t, level(t)) for each t, in canvas pixels
  const along = (times, level, start) => times.forEach((t, i) => {
    const x = u.valToPos(t, "x", true);
    const y = u.valToPos(level * bandScale(b, t), "y", true);
    if (i === 0 && start) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  });
  ctx.beginPath();
  along(ts, b.hi, true);
  along([...ts].reverse(), b.lo, false);
  ctx.closePath();
  ctx.fill();
  ctx.globalAlpha = 0.6;
  ctx.strokeStyle = color;
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  along(ts, b.value, true);
  ctx.stroke();
  ctx.restore();
}

/** y range covering the values, their intervals and the session's band, with a little room. */
function yRange(holder, min, max) {
  let lo = min;
  let hi = max;
  const band = holder.band && !holder.band.perHour ? [holder.band.lo, holder.band.hi] : [];
  for (const arr of [holder.lo, holder.hi, holder.values, band]) {
    for (const v of arr) {
      if (typeof v !== "number") continue;
      if (lo === null || v < lo) lo = v;
      if (hi === null || v > hi) hi = v;
    }
  }
  if (lo === null || hi === null) return [0, 1];
  let pad = (hi - lo) * 0.1;
  if (!(pad > 0)) pad = Math.abs(hi) * 0.05 || 1;
  return [lo - pad, hi + pad];
}

/** The 95 % intervals as vertical bars with small caps, in canvas pixels. */
function drawIntervals(u, holder, color) {
  const ctx = u.ctx;
  const xs = u.data[0];
  const dpr = window.devicePixelRatio || 1;
  const cap = 3 * dpr;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = Math.max(1, dpr);
  ctx.beginPath();
  for (let i = 0; i < xs.length; i++) {
    const lo = holder.lo[i];
    const hi = holder.hi[i];
    if (typeof lo !== "number" || typeof hi !== "number") continue;
    const x = u.valToPos(xs[i], "x", true);
    const y0 = u.valToPos(lo, "y", true);
    const y1 = u.valToPos(hi, "y", true);
    ctx.moveTo(x, y0);
    ctx.lineTo(x, y1);
    ctx.moveTo(x - cap, y0);
    ctx.lineTo(x + cap, y0);
    ctx.moveTo(x - cap, y1);
    ctx.lineTo(x + cap, y1);
  }
  ctx.stroke();
  ctx.restore();
}
