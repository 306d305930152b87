// The live angle plot: 100 Hz telemetry into fixed rings, drawn at most ~10 times a
// second into the one uPlot instance. Nothing here grows with time: a night of telemetry
// uses the same few Float64Arrays as the first minute.

import { Ring } from "./ring.js";
import { axis, createPlot, fitSize, JOINT_COLORS } from "./plots.js";
import { sig } from "./format.js";

const WINDOW_S = 20;
// 20 s at up to ~200 Hz: room for a faster telemetry rate without reallocating
const CAPACITY = 4096;
const FRAME_MS = 100; // at most ~10 redraws a second
const STALE_MS = 3000; // no telemetry for this long: the plot is stale

export function createLive({ store }) {
  const section = document.getElementById("live");
  const plotEl = document.getElementById("live-plot");
  const readout = document.getElementById("live-readout");
  const ring = new Ring(CAPACITY, 2);
  // the arrays handed to uPlot; refilled in place every frame
  const xs = new Float64Array(CAPACITY);
  const ys = [new Float64Array(CAPACITY), new Float64Array(CAPACITY)];

  let samples = 0;
  let lastArrival = 0; // performance.now() of the last telemetry message
  let lastDraw = 0;
  let pending = false; // a frame is already scheduled
  let rate = null;
  let dropped = null;
  let stale = true;

  const plot = createPlot(plotEl, {
    scales: { x: { time: false, range: [-WINDOW_S, 0] } },
    axes: [axis({ label: "time to now, s", labelSize: 18, labelFont: "11px system-ui" }),
      axis({ label: "angle, deg", labelSize: 18, labelFont: "11px system-ui", size: fitSize })],
    series: [
      { label: "t, s", value: (u, v) => (v == null ? "—" : v.toFixed(2)) },
      { label: "θ0 (arm)", stroke: JOINT_COLORS[0], width: 1.5, value: (u, v) => (v == null ? "—" : sig(v)) },
      { label: "θ1 (pendulum)", stroke: JOINT_COLORS[1], width: 1.5, value: (u, v) => (v == null ? "—" : sig(v)) },
    ],
    cursor: { drag: { x: false, y: false } },
  }, [[], [], []], 240);

  function setStale(value) {
    if (value === stale) return;
    stale = value;
    section.dataset.stale = value ? "true" : "false";
    if (value) readout.textContent = samples ? `no telemetry for ${STALE_MS / 1000} s or more` : "no telemetry yet";
  }
  section.dataset.stale = "true";
  setInterval(() => {
    if (!stale && performance.now() - lastArrival > STALE_MS) setStale(true);
  }, 500);

  /** The router calls this for each telemetry message; false means "not readable". */
  function onTelemetry(p) {
    const t = p.t;
    const a = p.theta0_deg;
    const b = p.theta1_deg;
    if (!Array.isArray(t) || !Array.isArray(a) || !Array.isArray(b)) return false;
    const n = Math.min(t.length, a.length, b.length);
    let last = ring.last();
    let took = 0;
    for (let k = 0; k < n; k++) {
      const tk = t[k];
      if (!Number.isFinite(tk) || !Number.isFinite(a[k]) || !Number.isFinite(b[k])) continue;
      // the service restarted or its clock stepped back: start the window afresh
      if (tk < last - 1) ring.clear();
      ring.push(tk, [a[k], b[k]]);
      last = tk;
      took++;
    }
    if (!took) return true; // an empty block is still a valid message
    samples += took;
    rate = Number.isFinite(p.rate_hz) ? p.rate_hz : rate;
    dropped = Number.isFinite(p.dropped) ? p.dropped : dropped;
    const theta0 = ring.ch[0][(ring.head - 1 + CAPACITY) % CAPACITY];
    const theta1 = ring.ch[1][(ring.head - 1 + CAPACITY) % CAPACITY];
    section.dataset.samples = String(samples);
    section.dataset.theta0 = String(theta0);
    store.state.telemetry.samples = samples;
    store.state.telemetry.theta0 = theta0;
    lastArrival = performance.now();
    setStale(false);
    readout.textContent = `θ0 ${sig(theta0)}°  θ1 ${sig(theta1)}°` +
      (rate ? ` · ${rate} Hz` : "") + (dropped ? ` · ${dropped} blocks dropped` : "");
    schedule();
    return true;
  }

  function schedule() {
    if (pending) return;
    pending = true;
    const wait = Math.max(0, FRAME_MS - (performance.now() - lastDraw));
    setTimeout(() => requestAnimationFrame(draw), wait);
  }

  function draw() {
    pending = false;
    lastDraw = performance.now();
    const tRef = ring.last();
    if (!Number.isFinite(tRef)) return;
    const n = ring.copySince(tRef - WINDOW_S, tRef, xs, ys);
    // subarray views share the preallocated memory; only the small view objects are new
    plot.u.setData([xs.subarray(0, n), ys[0].subarray(0, n), ys[1].subarray(0, n)]);
  }

  return { onTelemetry };
}
