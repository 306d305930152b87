// uPlot helpers shared by the live, overlay and trend plots: one palette, and a plot that
// follows its container's width (a laptop window resized, a phone turned).

/* global uPlot */

import { sig } from "./format.js";

export const JOINT_COLORS = ["#1f6feb", "#d9480f", "#2f9e44", "#9c36b5", "#0c8599", "#e67700"];
// a darker shade per joint, for the identified (simulated) curve drawn over the measured one
export const JOINT_DARK = ["#0b3d91", "#7a2804", "#1b5e20", "#5c1f6b", "#075a66", "#8a4700"];
export const GRID = { stroke: "#e6e8eb", width: 1 };
export const AXIS_FONT = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

/** Axis defaults: small font, light grid, dark ticks. */
export function axis(extra = {}) {
  return { stroke: "#444", grid: GRID, ticks: { stroke: "#ccc", width: 1 }, font: AXIS_FONT, ...extra };
}

/**
 * The y axis's size, fitted to its longest tick label (uPlot's fixed default cuts
 * "0.00475"), measured in the plot's own canvas font. uPlot calls it again when a new
 * size moves the ticks, until the two agree.
 */
export function fitSize(u, values, axisIdx) {
  if (!values) return 50; // before the first data: a guess, corrected on the first draw
  const a = u.axes[axisIdx];
  let w = 0;
  u.ctx.save();
  u.ctx.font = a.font[0];
  for (const v of values) w = Math.max(w, u.ctx.measureText(String(v)).width);
  u.ctx.restore();
  return Math.ceil(w / (window.devicePixelRatio || 1)) + 14; // uPlot adds the label size itself
}

/**
 * Tick labels with as many significant digits as the tick spacing needs: a parameter that
 * barely moves over a night (0.72351 to 0.72362) must not get five ticks all "0.724".
 */
export function valueTicks(u, splits, axisIdx, space, incr) {
  return splits.map((v) => {
    if (v === 0 || !Number.isFinite(v)) return String(v);
    const digits = Math.ceil(Math.log10(Math.abs(v) / Math.abs(incr || v))) + 1;
    return sig(v, Math.min(8, Math.max(2, digits)));
  });
}

/** Tick labels for a time axis in unix seconds, as 24 h wall-clock time (lab notebooks). */
export function clockTicks(u, ticks) {
  const span = ticks.length > 1 ? ticks[ticks.length - 1] - ticks[0] : 0;
  return ticks.map((t) => {
    const d = new Date(t * 1000);
    const hm = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: span < 120 ? "2-digit" : undefined });
    return span > 86400 ? `${d.toLocaleDateString("en-GB", { day: "2-digit", month: "short" })} ${hm}` : hm;
  });
}

/**
 * A uPlot in `el` that keeps `el`'s width. Resizes go through requestAnimationFrame so a
 * resize never runs inside the ResizeObserver callback (which would warn of a loop).
 */
export function createPlot(el, opts, data, height) {
  const width = Math.max(160, el.clientWidth || 300);
  const u = new uPlot({ ...opts, width, height }, data, el);
  let frame = 0;
  const ro = new ResizeObserver(() => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const w = Math.max(160, el.clientWidth);
      if (el.clientWidth && w !== u.width) u.setSize({ width: w, height });
    });
  });
  ro.observe(el);
  return {
    u,
    destroy() {
      ro.disconnect();
      if (frame) cancelAnimationFrame(frame);
      u.destroy();
    },
  };
}
