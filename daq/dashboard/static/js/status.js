// The header and the rig card: broker link, service state, what the rig is doing, link
// health, and the "service offline" banner that marks everything live as stale.

import { clock, count, duration, num } from "./format.js";
import { captureStatus } from "./captures.js";

const $ = (id) => document.getElementById(id);

const RIG_WORDS = {
  online: "armed",
  idle: "idle",
  capturing: "recording",
  suspended: "suspended",
  offline: "offline",
};
// A link counter that went up within this long colours the link amber.
const RECENT_MS = 60_000;

export function createStatus({ store }) {
  const body = document.body;
  const linkSeen = { key: null, changedAt: 0 };
  const last = { link: null, source: null }; // the newest status that had them

  store.on("config", () => {
    const c = store.state.config;
    $("rig-id").textContent = c.rig_id || "";
    $("software-version").textContent = c.software_version ? `dashboard of hilrig ${c.software_version}` : "";
    document.title = `hilrig ${c.rig_id || ""}`;
  });

  store.on("broker", renderBroker);
  store.on("status", () => { renderService(); renderRig(); renderLink(); });
  // "identifying" depends on the selected session's captures and progress
  store.on("captures", renderRig);
  store.on("sessions", renderRig);
  store.on("session-selected", renderRig);
  store.on("live", renderCaptureNow);
  // the banners' times, and the link going back to green a minute after its counters stop
  setInterval(() => { renderService(); renderBroker(); renderLink(); }, 10_000);

  function renderBroker() {
    const b = store.state.broker;
    const el = $("broker-state");
    el.dataset.state = b.state;
    el.textContent = b.state + (b.state === "connected" && b.protocol ? ` (MQTT ${b.protocol === 5 ? "5" : "3.1.1"})` : "");
    if (body.dataset.login === "required" && b.state !== "connected") el.textContent = "waiting for login";
    body.dataset.broker = b.state;
    const banner = $("banner-broker");
    const lost = (b.state === "offline" || b.state === "reconnecting") && body.dataset.login !== "required";
    banner.hidden = !lost;
    if (lost && !b.connectedOnce) {
      banner.textContent = `cannot reach the broker at ${b.url || "(no url)"} (trying since ${clock(b.since)}): ` +
        "is the hilrig service, or the broker it uses, running? Retrying; the page fills when it answers";
    } else if (lost) {
      banner.textContent = `broker connection at ${b.url || "(no url)"} lost since ${clock(b.since)}: retrying; the page fills again when it is back`;
    }
  }

  function renderService() {
    const s = store.state.status;
    const el = $("service-state");
    if (!s) return;
    const st = s.payload.state;
    el.dataset.state = st;
    el.textContent = st + (st === "suspended" && s.payload.reason ? `: ${s.payload.reason}` : "");
    el.title = s.payload.time ? `published ${clock(s.payload.time)}` : "";
    const off = store.state.offline;
    const banner = $("banner-offline");
    if (off) {
      body.dataset.stale = "true";
      banner.hidden = false;
      banner.textContent = `service offline since ${off.before ? "before " : ""}${clock(off.since)}` +
        " — everything shown is the last known state";
    } else {
      delete body.dataset.stale;
      banner.hidden = true;
    }
  }

  /** idle / armed / recording / identifying / suspended (+ reason) / offline. */
  function renderRig() {
    const el = $("rig-state");
    const s = store.state.status;
    if (!s) return;
    const st = s.payload.state;
    let word = RIG_WORDS[st] || st;
    if (st === "suspended" && s.payload.reason) word += `: ${s.payload.reason}`;
    const identifying = identifyingCount();
    const key = identifying && st !== "capturing" && st !== "offline" ? "identifying" : (RIG_WORDS[st] || st);
    if (identifying) word += ` · identifying ${identifying}`;
    el.dataset.rigState = key;
    el.textContent = word;
  }

  /** Captures of the selected session recorded but not identified yet (or in flight). */
  function identifyingCount() {
    const sid = store.state.selectedSessionId;
    let n = 0;
    if (sid) {
      for (const c of store.state.captures.values()) {
        // the record says "captured"; before it comes, a successful stop without results
        if (c.session_id === sid && captureStatus(c) === "captured") n++;
      }
      const sess = store.state.sessions.get(sid);
      const inFlight = sess ? num(sess.in_flight) : null;
      if (inFlight !== null && inFlight > n) n = inFlight;
    }
    return n;
  }

  function renderLink() {
    const el = $("link-health");
    const s = store.state.status;
    // The last will (offline) carries no counters: keep showing the last ones, greyed.
    let link = s && s.payload.link;
    let src = s && s.payload.source;
    const fresh = Boolean(link && typeof link === "object");
    if (fresh) last.link = link;
    else link = last.link;
    if (src && typeof src === "object") last.source = src;
    else src = last.source;
    const srcEl = $("source-info");
    srcEl.textContent = src
      ? [src.kind, src.identity, src.firmware && `firmware ${src.firmware}`,
        num(src.sample_rate_hz) && `${src.sample_rate_hz} Hz`].filter(Boolean).join(" · ")
      : "—";
    srcEl.dataset.stale = s && s.payload.source ? "false" : "true";
    if (!link || typeof link !== "object") {
      el.textContent = "—";
      el.dataset.health = "unknown";
      return;
    }
    const errors = link.errors && typeof link.errors === "object" ? link.errors : {};
    const errorTotal = Object.values(errors).reduce((a, v) => a + (num(v) || 0), 0);
    const lost = num(link.lost_samples) || 0;
    const gaps = num(link.gaps) || 0;
    const parts = [`lost ${count(lost)} samples`];
    for (const [name, v] of Object.entries(errors)) parts.push(`${name} ${count(v)}`);
    if (!Object.keys(errors).length) parts.push("no errors");
    if (link.gaps !== undefined) parts.push(`gaps ${count(gaps)}`);
    if (num(link.estimated_lost)) parts.push(`≈${count(link.estimated_lost)} lost (est.)`);
    if (num(link.reconnects)) parts.push(`reconnects ${count(link.reconnects)}`);
    if (num(link.resets)) parts.push(`resets ${count(link.resets)}`);
    if (num(link.blocks) !== null) parts.push(`${count(link.blocks)} blocks`);
    el.textContent = parts.join(" · ");
    // Counters are totals since the bridge started; what matters at 3 am is whether
    // they are still climbing: amber when one went up within the last minute.
    const key = `${lost}/${errorTotal}/${gaps}/${num(link.reconnects) || 0}/${num(link.resets) || 0}`;
    const now = Date.now();
    if (linkSeen.key !== null && key !== linkSeen.key) linkSeen.changedAt = now;
    linkSeen.key = key;
    el.dataset.health = !fresh ? "stale" : now - linkSeen.changedAt < RECENT_MS ? "warning" : "ok";
    el.title = fresh ? "totals since the bridge started; amber while they are still climbing"
      : "the last counters the service sent";
  }

  function renderCaptureNow() {
    const el = $("capture-now");
    const l = store.state.live;
    if (!l) return;
    const name = l.seq != null ? `capture ${l.seq}` : `capture ${l.capture_id}`;
    if (l.document === "stop") {
      const outcome = l.exit_status || "stopped";
      el.dataset.state = outcome === "success" ? "done" : outcome;
      el.textContent = `${name} ${outcome === "success" ? "recorded" : outcome}` +
        (num(l.duration_s) !== null ? `, ${duration(l.duration_s)}` : "") +
        (num(l.lost_samples) ? `, ${count(l.lost_samples)} samples lost` : "") +
        (l.reason ? ` (${l.reason})` : "");
    } else {
      el.dataset.state = "recording";
      el.textContent = `recording ${name}` + (num(l.duration_s) !== null ? `, ${duration(l.duration_s)}` : "") +
        (num(l.samples) !== null ? ` · ${count(l.samples)} samples` : "");
    }
  }
}
