// The session card: which session (a selector; by default the one running, else the
// newest), its progress, counts, ETA, reason and operator prompt. It also owns the
// subscription to the selected session's capture records: one session's at a time, so
// a broker holding weeks of retained records does not send them all to every phone.

import { clock, count, duration, num } from "./format.js";
import { coalesce, fill, h } from "./dom.js";

const $ = (id) => document.getElementById(id);

export function createSession({ store, conn, prefix }) {
  const select = $("session-select");
  const section = $("session");
  const bodyEl = $("session-body");
  let subscribed = null;

  select.addEventListener("change", () => store.selectSession(select.value || null, true));

  const render = coalesce(() => { renderSelect(); renderBody(); });
  store.on("sessions", render);
  store.on("session-selected", ({ to }) => { follow(to); render(); });
  // elapsed, ETA and "identifying" come with the session message; the capture list does not
  // change what this card shows, so it does not listen to "captures"

  function follow(sessionId) {
    const topic = sessionId ? `${prefix}/session/${sessionId}/capture/+` : null;
    if (topic === subscribed) return;
    if (subscribed) conn.unsubscribe(subscribed);
    subscribed = topic;
    if (topic) conn.subscribe(topic, 1);
  }

  function sortedSessions() {
    return [...store.state.sessions.values()].sort((a, b) => String(b.time || "").localeCompare(String(a.time || "")));
  }

  /** Options updated in place, so an open selector on a phone is not rebuilt under a finger. */
  function renderSelect() {
    const sessions = sortedSessions();
    const byValue = new Map([...select.options].map((o) => [o.value, o]));
    sessions.forEach((s, i) => {
      let o = byValue.get(s.session_id);
      if (!o) o = new Option("", s.session_id);
      const label = `${s.name || s.session_id} — ${s.state}${s.time ? ` (${clock(s.time, false)})` : ""}`;
      if (o.textContent !== label) o.textContent = label;
      if (select.options[i] !== o) select.add(o, i);
      byValue.delete(s.session_id);
    });
    for (const o of byValue.values()) o.remove();
    const sel = store.state.selectedSessionId || "";
    if (select.value !== sel) select.value = sel;
    select.disabled = sessions.length < 2;
  }

  function renderBody() {
    const s = store.state.sessions.get(store.state.selectedSessionId);
    section.dataset.sessionId = s ? s.session_id : "";
    if (!s) {
      fill(bodyEl, h("p", { class: "muted" }, "no session yet"));
      return;
    }
    const planned = num(s.planned);
    const done = num(s.done) || 0;
    const eta = num(s.eta_s);
    const rows = [
      ["state", h("span", { class: "badge", dataset: { state: s.state } }, s.state.replace(/_/g, " "))],
      ["captures", `${count(done)} done of ${planned === null ? "?" : count(planned)}`],
      ["not done", countsLine(s)],
      ["in flight", `${count(num(s.in_flight) || 0)}${num(s.current_seq) !== null ? ` · current capture ${s.current_seq}` : ""}`],
      ["elapsed", duration(s.elapsed_s)],
      ["ETA", eta === null ? "—" : `${duration(eta)} (about ${clock(new Date(Date.now() + eta * 1000), false)})`],
    ];
    if (s.until_utc) rows.push(["until", clock(s.until_utc, false)]);
    if (num(s.rss_mb) !== null) rows.push(["memory", `${Math.round(s.rss_mb)} MB`]);
    if (s.reason) rows.push(["reason", s.reason]);

    fill(bodyEl,
      h("div", { class: "session-name" }, h("strong", null, s.name || "(unnamed plan)"),
        h("span", { class: "muted small" }, ` ${s.session_id}`)),
      h("div", { class: "progress-line" },
        h("progress", { id: "session-progress", max: planned || 1, value: Math.min(done, planned || done) }),
        h("span", { class: "small" }, planned ? `${Math.round((100 * done) / planned)} %` : "")),
      s.prompt ? h("p", { class: "prompt", role: "status" }, s.prompt) : null,
      h("dl", { class: "kv" }, rows.map(([k, v]) => [h("dt", null, k), h("dd", null, v)])));
  }

  function countsLine(s) {
    return [`failed ${count(num(s.failed) || 0)}`, `timeout ${count(num(s.timeout) || 0)}`,
      `interrupted ${count(num(s.interrupted) || 0)}`].join(" · ");
  }

  return { follow };
}
