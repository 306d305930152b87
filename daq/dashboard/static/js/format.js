// Number and time formatting, in one place so every panel writes values the same way.

const DASH = "—";

/** A finite number, or null: payload fields may be missing, null or (defensively) junk. */
export function num(x) {
  return typeof x === "number" && Number.isFinite(x) ? x : null;
}

/**
 * ~4 significant digits. Friction coefficients span 1e-5..1e2, so a fixed number of
 * decimals would either hide small ones or print noise on large ones; exponent form
 * only where plain digits would be unreadable.
 */
export function sig(x, digits = 4) {
  const v = num(x);
  if (v === null) return DASH;
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a < 1e-4 || a >= 1e6) {
    // "5.000e-4" -> "5e-4": trailing zeros of the mantissa carry no information
    const [m, e] = v.toExponential(digits - 1).split("e");
    return `${trimZeros(m)}e${e.replace("+", "")}`;
  }
  // toPrecision writes 12345 as "1.235e+4"; Number() turns that back into plain digits
  const p = v.toPrecision(digits);
  return p.includes("e") ? String(Number(p)) : trimZeros(p);
}

function trimZeros(s) {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** An integer count with thin grouping (12 345), or a dash. */
export function count(x) {
  const v = num(x);
  return v === null ? DASH : Math.round(v).toLocaleString("en-GB").replace(/,/g, "\u202f");
}

/** Percent with one decimal: fits are 90-100 %, where the first decimal matters. */
export function pct(x) {
  const v = num(x);
  return v === null ? DASH : `${v.toFixed(1)} %`;
}

/** Seconds as "12.4 s", "3 min 05 s", "2 h 14 min": a session ETA or a capture's length. */
export function duration(s) {
  const v = num(s);
  if (v === null) return DASH;
  if (v < 60) return `${v.toFixed(1)} s`;
  const m = Math.floor(v / 60);
  if (m < 60) return `${m} min ${String(Math.floor(v % 60)).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** A Date, or null, from an ISO 8601 string (the service writes UTC with a Z). */
export function parseTime(iso) {
  if (typeof iso !== "string" || !iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * Local wall-clock time: the engineer reads the night in their own time zone. The date is
 * added only when it is not today, so a table of one night stays narrow.
 */
export function clock(dateOrIso, withSeconds = true) {
  const d = dateOrIso instanceof Date ? dateOrIso : parseTime(dateOrIso);
  if (!d) return DASH;
  const t = d.toLocaleTimeString("en-GB", {
    hour: "2-digit", minute: "2-digit", second: withSeconds ? "2-digit" : undefined,
  });
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return t;
  return `${d.toLocaleDateString("en-GB", { day: "2-digit", month: "short" })} ${t}`;
}

/** Half width of an interval as a percentage of the value ("±3.2 %"), or "". */
export function plusMinusPct(value, ci) {
  const v = num(value);
  if (v === null || v === 0 || !Array.isArray(ci)) return "";
  const lo = num(ci[0]);
  const hi = num(ci[1]);
  if (lo === null || hi === null) return "";
  const half = Math.abs(hi - lo) / 2;
  return `±${sig((100 * half) / Math.abs(v), 2)} %`;
}

export { DASH };
