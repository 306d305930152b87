// The page's one state: what the broker told us, keyed so that a message arriving twice
// (a retained message after a reconnect, an at-least-once redelivery) changes nothing.
// Panels never talk to each other; they read the store and listen to its change kinds.
// Telemetry samples are not kept here (see live.js: ring buffers, not a growing list).

import { parseTime } from "./format.js";

const EVENTS_KEPT = 100;
// message ids remembered to drop redeliveries of events; bounded like the list itself
const EVENT_IDS_KEPT = 500;
const ACTIVE_SESSION_STATES = new Set(["running", "waiting_for_release", "suspended"]);

export function createStore() {
  const listeners = new Map(); // kind -> Set(fn)

  const state = {
    config: null,
    // url: where the page tries; connectedOnce: whether it ever got there (the banner says
    // "cannot reach" before that, "lost" after)
    broker: { state: "connecting", since: new Date(), protocol: null, url: null, connectedOnce: false },
    status: null, // { payload, receivedAt, retained }
    offline: null, // { since: Date, before: bool } while the service's last will stands
    sessions: new Map(), // session_id -> payload
    sessionResults: new Map(), // session_id -> its captures put together (hilrig.session-result/1)
    selectedSessionId: null,
    sessionPinned: false, // the user picked one: stop following the active session
    captures: new Map(), // capture_id -> capture (see ensureCapture)
    live: null, // the capture under way, from capture/<id> documents
    events: [], // newest first
    ignored: 0,
    role: { role: "unknown", text: "not probed yet" },
    commandLine: "",
    openCaptureId: null,
    method: null, // the method the table and trend show; null: the session's most common
    overlays: new Map(), // "<capture_id>/<method>" -> overlay, only for the open capture
    telemetry: { samples: 0, theta0: null }, // counters only; live.js holds the samples
  };
  const eventIds = [];
  const eventIdSet = new Set();

  function on(kind, fn) {
    if (!listeners.has(kind)) listeners.set(kind, new Set());
    listeners.get(kind).add(fn);
    return () => listeners.get(kind).delete(fn);
  }

  function emit(kind, detail) {
    const fns = listeners.get(kind);
    if (!fns) return;
    for (const fn of fns) fn(detail);
  }

  // --- broker and service -------------------------------------------------------------

  function setBroker(brokerState, protocol = state.broker.protocol, url = state.broker.url) {
    const b = state.broker;
    if (brokerState === b.state && protocol === b.protocol && url === b.url) return;
    // "since" is when this state began: reconnect attempts while down do not reset it
    const down = (x) => x === "offline" || x === "reconnecting" || x === "connecting";
    const since = down(brokerState) && down(b.state) ? b.since : new Date();
    state.broker = { state: brokerState, since, protocol, url,
                     connectedOnce: b.connectedOnce || brokerState === "connected" };
    emit("broker");
  }

  function applyStatus(payload, retained) {
    const prev = state.status ? state.status.payload.state : null;
    const receivedAt = new Date();
    state.status = { payload, receivedAt, retained };
    if (payload.state === "offline") {
      // A retained will was written when the service connected, not when it died: all we
      // know is that it was gone before we looked. A live will is as good as "now".
      if (!state.offline) state.offline = { since: receivedAt, before: Boolean(retained) };
    } else {
      state.offline = null;
    }
    emit("status");
    if (prev !== payload.state) {
      emit("status-change", { from: prev, to: payload.state });
    }
  }

  // --- sessions -----------------------------------------------------------------------

  function applySession(payload) {
    state.sessions.set(payload.session_id, payload);
    if (!state.sessionPinned) autoSelectSession();
    emit("sessions");
  }

  function applySessionResult(payload) {
    state.sessionResults.set(payload.session_id, payload);
    emit("session-result", { sessionId: payload.session_id });
  }

  function removeSession(id) {
    state.sessionResults.delete(id);
    if (!state.sessions.delete(id)) return;
    if (state.selectedSessionId === id) state.sessionPinned = false;
    if (!state.sessionPinned) autoSelectSession();
    emit("sessions");
  }

  /** The session to show when the user has not chosen: the active one, else the newest. */
  function defaultSessionId() {
    let best = null;
    let bestKey = null;
    for (const s of state.sessions.values()) {
      const t = parseTime(s.time);
      const key = [ACTIVE_SESSION_STATES.has(s.state) ? 1 : 0, t ? t.getTime() : 0];
      if (!bestKey || key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
        best = s.session_id;
        bestKey = key;
      }
    }
    return best;
  }

  function autoSelectSession() {
    const id = defaultSessionId();
    if (id !== state.selectedSessionId) {
      const old = state.selectedSessionId;
      state.selectedSessionId = id;
      emit("session-selected", { from: old, to: id });
    }
  }

  function selectSession(id, byUser = true) {
    if (byUser) state.sessionPinned = true;
    if (id === state.selectedSessionId) return;
    const old = state.selectedSessionId;
    state.selectedSessionId = id;
    emit("session-selected", { from: old, to: id });
  }

  // --- captures -----------------------------------------------------------------------

  function ensureCapture(captureId) {
    let c = state.captures.get(captureId);
    if (!c) {
      c = {
        capture_id: captureId,
        session_id: null,
        seq: null,
        record: null, // the retained hilrig.capture_record/1, when its session is selected
        docs: { start: null, progress: null, stop: null }, // hilrig.capture/1 documents
        results: {}, // method -> normalized result (record summaries and live results)
      };
      state.captures.set(captureId, c);
    }
    return c;
  }

  function learnIds(c, payload) {
    if (typeof payload.session_id === "string" && !c.session_id) c.session_id = payload.session_id;
    if (Number.isInteger(payload.seq)) c.seq = payload.seq;
  }

  function applyCaptureDoc(captureId, payload) {
    const c = ensureCapture(captureId);
    learnIds(c, payload);
    const doc = payload.document;
    if (doc === "start" || doc === "progress" || doc === "stop") c.docs[doc] = payload;
    // The capture under way: the newest start or progress; a stop ends it (kept as the
    // last outcome so "capture 3 done" stays readable until the next one starts).
    const live = state.live;
    if (doc === "start" || doc === "progress") {
      if (!live || live.capture_id !== captureId || live.document !== "stop") {
        state.live = { capture_id: captureId, seq: c.seq, session_id: c.session_id,
          document: doc, samples: payload.samples ?? null, duration_s: payload.duration_s ?? null,
          at: new Date() };
      }
    } else if (doc === "stop") {
      state.live = { capture_id: captureId, seq: c.seq, session_id: c.session_id,
        document: "stop", exit_status: payload.exit_status ?? null, reason: payload.reason ?? null,
        samples: payload.samples ?? null, duration_s: payload.duration_s ?? null,
        lost_samples: payload.lost_samples ?? null, gaps: payload.gaps ?? null, at: new Date() };
    }
    emit("live");
    emit("captures");
  }

  function applyRecord(payload) {
    const c = ensureCapture(payload.capture_id);
    learnIds(c, payload);
    c.session_id = payload.session_id; // the record is authoritative
    c.record = payload;
    const results = payload.results && typeof payload.results === "object" ? payload.results : {};
    for (const [method, summary] of Object.entries(results)) {
      if (summary && typeof summary === "object") mergeResult(c, normalizeResult(method, summary, true));
    }
    emit("captures");
  }

  function applyResult(captureId, method, payload) {
    const c = ensureCapture(captureId);
    learnIds(c, payload);
    mergeResult(c, normalizeResult(method, payload, false));
    emit("captures");
  }

  function mergeResult(c, r) {
    const old = c.results[r.method];
    if (old) {
      const to = parseTime(old.created_utc)?.getTime() ?? 0;
      const tn = parseTime(r.created_utc)?.getTime() ?? 0;
      if (tn < to) return; // an older result (a redelivery after a re-identification)
      if (tn === to) r.overlay = r.overlay ?? old.overlay; // the live result does not say
    }
    c.results[r.method] = r;
  }

  function applyOverlay(captureId, method, payload) {
    // Overlays are large (about 1000 points per joint): keep only the open capture's.
    if (captureId !== state.openCaptureId) return;
    state.overlays.set(`${captureId}/${method}`, payload);
    const c = state.captures.get(captureId);
    if (c && c.results[method] && c.results[method].overlay !== true) c.results[method].overlay = true;
    emit("overlay", { captureId, method });
  }

  function openCapture(captureId) {
    if (captureId === state.openCaptureId) return;
    const from = state.openCaptureId;
    state.openCaptureId = captureId;
    state.overlays.clear();
    emit("capture-open", { from, to: captureId });
  }

  /** The captures of a session sorted by seq; without any session, all that are known. */
  function sessionCaptures(sessionId) {
    const list = [];
    for (const c of state.captures.values()) {
      if (sessionId ? c.session_id === sessionId : true) list.push(c);
    }
    list.sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity)
      || String(a.capture_id).localeCompare(String(b.capture_id)));
    return list;
  }

  /** The method most captures of the list have a result of (ties: alphabetical). */
  function mainMethod(captures) {
    const n = new Map();
    for (const c of captures) for (const m of Object.keys(c.results)) n.set(m, (n.get(m) || 0) + 1);
    let best = null;
    for (const [m, k] of n) {
      if (best === null || k > n.get(best) || (k === n.get(best) && m < best)) best = m;
    }
    return best;
  }

  // --- events, counters, role ---------------------------------------------------------

  function addEvent(payload) {
    const id = typeof payload.msg_id === "string" ? payload.msg_id : null;
    if (id) {
      if (eventIdSet.has(id)) return;
      eventIdSet.add(id);
      eventIds.push(id);
      if (eventIds.length > EVENT_IDS_KEPT) eventIdSet.delete(eventIds.shift());
    }
    state.events.unshift({ ...payload, receivedAt: new Date() });
    if (state.events.length > EVENTS_KEPT) state.events.length = EVENTS_KEPT;
    emit("events");
  }

  function countIgnored() {
    state.ignored += 1;
    emit("ignored");
  }

  function setRole(role, text) {
    if (state.role.role === role && state.role.text === text) return;
    state.role = { role, text };
    emit("role");
  }

  function setCommandLine(text) {
    state.commandLine = text;
    emit("command-line");
  }

  function setMethod(method) {
    if (method === state.method) return;
    state.method = method;
    emit("method");
  }

  /** The method shown for a list of captures: the user's choice if they have it, else the most common. */
  function methodFor(captures) {
    if (state.method && captures.some((c) => c.results[state.method])) return state.method;
    return mainMethod(captures);
  }

  function setConfig(config) {
    state.config = config;
    emit("config");
  }

  return {
    state, on, emit,
    setConfig, setBroker, applyStatus, applySession, applySessionResult, removeSession, selectSession,
    defaultSessionId,
    applyCaptureDoc, applyRecord, applyResult, applyOverlay, openCapture,
    sessionCaptures, mainMethod, methodFor, setMethod, addEvent, countIgnored, setRole, setCommandLine,
  };
}

/**
 * One shape for a result whether it came in a capture record (warnings at the top) or
 * live on result/<capture_id>/<method> (warnings inside diagnostics): only what the
 * table, detail and trend use is kept, so a night of results stays small.
 */
export function normalizeResult(method, src, fromRecord) {
  const warnings = fromRecord ? src.warnings : src.diagnostics && src.diagnostics.warnings;
  return {
    method,
    rig_kind: typeof src.rig_kind === "string" ? src.rig_kind : "furuta",
    created_utc: typeof src.created_utc === "string" ? src.created_utc : null,
    compute_seconds: typeof src.compute_seconds === "number" ? src.compute_seconds : null,
    fit_percent: isObject(src.fit_percent) ? src.fit_percent : {},
    warnings: Array.isArray(warnings) ? warnings.filter((w) => typeof w === "string") : [],
    parameters: isObject(src.parameters) ? src.parameters : {},
    rig: isObject(src.rig) ? src.rig : {},
    // a live result does not say whether an overlay was retained; the record does
    overlay: fromRecord ? src.overlay === true : undefined,
  };
}

function isObject(x) {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}
