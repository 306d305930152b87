// Exports of the trend: a CSV of every parameter of every capture (for a notebook), and
// one PNG of all trend plots with their titles (for a lab report). Both are made in the
// page and downloaded through a Blob URL: the server is not involved.

import { trendRows } from "./trend.js";
import { captureStart } from "./captures.js";
import { h } from "./dom.js";

const CSV_COLUMNS = ["session_id", "seq", "capture_id", "started_utc", "method", "parameter",
  "value", "ci_low", "ci_high", "identifiable"];

export function createExport({ store, trend }) {
  document.getElementById("export-csv").addEventListener("click", exportCsv);
  document.getElementById("export-png").addEventListener("click", exportPng);

  function context() {
    const list = store.sessionCaptures(store.state.selectedSessionId);
    const method = store.methodFor(list);
    const rig = (store.state.config && store.state.config.rig_id) || "rig";
    const session = store.state.selectedSessionId || "all";
    return { list, method, base: safeName(`hilrig-${rig}-${session}-${method || "none"}`) };
  }

  function exportCsv() {
    const { list, method, base } = context();
    const { rows } = trendRows(list, method);
    const lines = [CSV_COLUMNS.join(",")];
    for (const r of rows) {
      const c = r.capture;
      lines.push([c.session_id ?? "", c.seq ?? "", c.capture_id, captureStart(c) ?? "", method,
        r.name, r.value ?? "", r.lo ?? "", r.hi ?? "", r.identifiable ? "true" : "false"].map(csvField).join(","));
    }
    download(new Blob([`${lines.join("\r\n")}\r\n`], { type: "text/csv" }), `${base}-trend.csv`);
  }

  function exportPng() {
    const { method, base } = context();
    const items = trend.canvases();
    if (!items.length) return;
    const dpr = window.devicePixelRatio || 1;
    const cols = Math.min(3, items.length);
    const cellW = Math.max(...items.map((i) => i.canvas.width));
    const plotH = Math.max(...items.map((i) => i.canvas.height));
    const titleH = Math.round(22 * dpr);
    const headH = Math.round(30 * dpr);
    const gap = Math.round(12 * dpr);
    const rowsN = Math.ceil(items.length / cols);
    // a canvas that is never put in the page: the composed picture
    const out = document.createElement("canvas");
    out.width = cols * cellW + (cols + 1) * gap;
    out.height = headH + rowsN * (titleH + plotH + gap) + gap;
    const ctx = out.getContext("2d");
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.fillStyle = "#1b1f24";
    ctx.textBaseline = "middle";
    ctx.font = `600 ${Math.round(14 * dpr)}px system-ui, sans-serif`;
    const cfg = store.state.config || {};
    ctx.fillText(`hilrig ${cfg.rig_id || ""} · session ${store.state.selectedSessionId || "—"} · ${method || "—"}` +
      ` · 95 % intervals as bars · exported ${new Date().toISOString().slice(0, 19)}Z`, gap, headH / 2 + gap / 2);
    ctx.font = `${Math.round(12 * dpr)}px system-ui, sans-serif`;
    items.forEach((item, i) => {
      const x = gap + (i % cols) * (cellW + gap);
      const y = headH + Math.floor(i / cols) * (titleH + plotH + gap);
      ctx.fillStyle = "#1b1f24";
      ctx.fillText(item.title, x, y + titleH / 2);
      ctx.drawImage(item.canvas, x, y + titleH);
    });
    out.toBlob((blob) => { if (blob) download(blob, `${base}-trend.png`); }, "image/png");
  }
}

function csvField(v) {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function safeName(s) {
  return s.replace(/[^A-Za-z0-9._-]+/g, "_");
}

/** Save a blob under a name: a temporary link to a Blob URL, revoked shortly after. */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: name, class: "visually-hidden" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
