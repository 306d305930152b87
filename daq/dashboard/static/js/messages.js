// From an MQTT message to a store update: parse, check the schema, route by topic.
// Anything we cannot read (bad JSON, not an object, an unknown schema or topic) is
// counted and dropped quietly: a dashboard left open overnight must not fill the console,
// and a newer service may well publish things this page does not know yet.

const decoder = new TextDecoder();

/**
 * Returns handle(topic, payloadBytes, packet) for the connection's "message" event.
 * `telemetry(payload)` is called directly for the 10-a-second telemetry so it stays cheap.
 * `reply(payload)` gets command replies (controls.js matches the correlation id).
 */
export function createRouter({ store, prefix, telemetry, reply }) {
  const base = `${prefix}/`;

  return function handle(topic, bytes, packet) {
    if (!topic.startsWith(base)) return;
    const parts = topic.slice(base.length).split("/");
    if (!bytes || !bytes.length) {
      // An empty retained message clears a topic on the broker: a session deleted from
      // it goes from the selector too. Elsewhere there is nothing to do.
      if (parts[0] === "session" && parts.length === 2) store.removeSession(parts[1]);
      return;
    }
    let payload;
    try {
      payload = JSON.parse(decoder.decode(bytes));
    } catch {
      store.countIgnored();
      return;
    }
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      store.countIgnored();
      return;
    }
    const ok = route(parts, payload, Boolean(packet && packet.retain));
    if (!ok) store.countIgnored();
  };

  function route(parts, p, retained) {
    const [head, a, b, c] = parts;
    switch (head) {
      case "telemetry":
        if (parts.length !== 1 || p.schema !== "hilrig.telemetry/1") return false;
        return telemetry(p) !== false;
      case "status":
        if (parts.length !== 1 || p.schema !== "hilrig.status/1" || typeof p.state !== "string") return false;
        store.applyStatus(p, retained);
        return true;
      case "capture":
        if (parts.length !== 2 || p.schema !== "hilrig.capture/1") return false;
        store.applyCaptureDoc(a, p);
        return true;
      case "session":
        if (parts.length === 2) {
          if (p.schema !== "hilrig.session/1" || p.session_id !== a) return false;
          store.applySession(p);
          return true;
        }
        if (parts.length === 3 && b === "result") {
          if (p.schema !== "hilrig.session-result/1" || p.session_id !== a) return false;
          store.applySessionResult(p);
          return true;
        }
        if (parts.length === 4 && b === "capture") {
          if (p.schema !== "hilrig.capture_record/1" || typeof c !== "string") return false;
          store.applyRecord({ ...p, session_id: a, capture_id: c });
          return true;
        }
        return false;
      case "result":
        if (a === "latest") return true; // the newest result again: the table has it already
        if (parts.length === 3) {
          if (p.schema !== "hilrig.result/1") return false;
          store.applyResult(a, b, p);
          return true;
        }
        if (parts.length === 4 && c === "overlay") {
          if (p.schema !== "hilrig.overlay/1") return false;
          store.applyOverlay(a, b, p);
          return true;
        }
        return false;
      case "events":
        if (parts.length !== 1 || p.schema !== "hilrig.event/1") return false;
        store.addEvent(p);
        return true;
      case "reply":
        if (p.schema !== "hilrig.reply/1") return false;
        reply(p);
        return true;
      default:
        return false;
    }
  }
}
