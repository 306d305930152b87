// Operator commands and who may send them.
//
// The broker, not the page, decides who commands the rig (its ACL): the page finds out by
// asking. Right after each connection, and whenever the service comes back from offline,
// it sends the harmless verb `ping` the way any command is sent. Then:
//   - the broker refuses the PUBLISH (MQTT 5 PUBACK reason code >= 0x80): read-only,
//   - the service replies (on our reply topic): operator, the buttons appear,
//   - nothing within 5 s (a 3.1.1 broker drops a forbidden publish silently, or the
//     service is busy or gone): unknown, no buttons; asked again on the next status change.
// Every command asks for a confirmation in an in-page <dialog> (window.confirm blocks the
// page and cannot be styled or tested), and its reply is shown on one line.

import { randomHex } from "./connection.js";
import { h, fill } from "./dom.js";

const PROBE_TIMEOUT_MS = 5000;
const COMMAND_TIMEOUT_MS = 10_000;

const VERBS = [
  { verb: "arm", label: "Arm", what: "re-arm the trigger (not while recording)" },
  { verb: "abort", label: "Abort", what: "drop the capture being recorded (a session asks for it again)", danger: true },
  { verb: "release", label: "Release", what: "let the rig go now" },
  { verb: "session/pause", label: "Pause session", what: "suspend the session: no new release until it is resumed" },
  { verb: "session/resume", label: "Resume session", what: "lift the pause" },
  { verb: "session/stop", label: "Stop session", what: "stop the session after the capture under way", danger: true },
];

/** "Publish error: Not authorized" -> "not authorized" (MQTT.js names the reason code). */
function refusalText(err) {
  const m = String((err && err.message) || "").replace(/^Publish error:\s*/i, "");
  return (m || `reason code ${err && err.code}`).toLowerCase();
}

export function createControls({ store, prefix }) {
  const box = document.getElementById("controls");
  const buttons = box.querySelector(".buttons");
  const line = document.getElementById("command-line");
  const roleEl = document.getElementById("role");
  const dialog = document.getElementById("confirm-dialog");
  const dialogText = document.getElementById("confirm-text");
  let conn = null;
  let replyTopic = null;
  let replyRefused = false;
  const pending = new Map(); // correlation_id -> { verb, probe, timer }
  let probing = null; // the probe's correlation id while it waits
  let lineIsRole = false; // the command line shows the role's reason, not a reply

  fill(buttons); // the buttons exist only for an operator (see renderRole)

  store.on("role", renderRole);
  // a command to a service that is gone, or through a broker we are not connected to,
  // could only time out: the buttons wait until both are back
  store.on("status", renderEnabled);
  store.on("broker", renderEnabled);
  store.on("command-line", () => { line.textContent = store.state.commandLine; });
  store.on("subscribe-refused", ({ topic }) => {
    if (topic === replyTopic) replyRefused = true;
  });
  store.on("status-change", ({ from, to }) => {
    if (!conn || !conn.connected || to === "offline") return;
    // back from offline: a new service may have another ACL view; unknown: try again
    if (from === "offline" || (store.state.role.role === "unknown" && !probing)) probe();
  });
  renderRole();

  function renderRole() {
    const { role, text } = store.state.role;
    roleEl.dataset.role = role;
    // the badge says why (read-only because..., unanswered...); long text is cut by CSS,
    // the title keeps all of it
    roleEl.textContent = role === "operator" ? "operator" : text || role;
    roleEl.title = text;
    box.dataset.role = role;
    if (role === "operator") {
      if (!buttons.children.length) {
        fill(buttons, VERBS.map((v) => h("button", {
          type: "button", class: v.danger ? "danger" : null, dataset: { verb: v.verb },
          title: v.what, onclick: () => confirmSend(v),
        }, v.label)));
      }
    } else {
      fill(buttons); // removed, not just hidden: nothing to click for a read-only user
    }
    renderEnabled();
  }

  function renderEnabled() {
    const s = store.state.status;
    const off = store.state.broker.state !== "connected" || (s && s.payload.state === "offline");
    for (const b of buttons.querySelectorAll("button")) b.disabled = off;
    buttons.title = off ? "the service or the broker is offline" : "";
  }

  /** A role found by a probe or a refusal: the header and the command line say it. */
  function decided(role, text) {
    store.setRole(role, text);
    if (role === "operator") {
      if (lineIsRole) store.setCommandLine("");
      lineIsRole = false;
    } else {
      store.setCommandLine(text);
      lineIsRole = true;
    }
  }

  /** A new connection (and with it a new client id and reply topic). */
  function connected(connection) {
    conn = connection;
    replyTopic = `${prefix}/reply/${conn.clientId}`;
    replyRefused = false;
    // probe once the reply topic is subscribed (SUBACK), refused or not: a refusal is
    // itself an answer (see request())
    const mine = conn;
    conn.subscribe(replyTopic, 1, () => { if (conn === mine && conn.connected) probe(); });
  }

  function request(verb, isProbe) {
    const id = randomHex(8);
    // command_id: should the message arrive twice, the service runs it once
    const body = JSON.stringify({ correlation_id: id, command_id: `dash-${id}`, reply_to: replyTopic });
    const timeout = isProbe ? PROBE_TIMEOUT_MS : COMMAND_TIMEOUT_MS;
    const entry = { verb, probe: isProbe, timer: setTimeout(() => unanswered(id), timeout) };
    pending.set(id, entry);
    const sent = conn && conn.publish(`${prefix}/cmd/${verb}`, body, (err) => {
      if (!err || !(typeof err.code === "number" && err.code >= 0x80)) {
        if (isProbe && !err && replyRefused) {
          // the broker takes our commands but will not let us read the replies
          finish(id);
          decided("read-only", "read-only: the broker refused the reply topic (not authorized)");
        }
        return;
      }
      finish(id);
      const why = refusalText(err);
      decided("read-only", `read-only: the broker refused a command (${why})`);
      if (!isProbe) {
        store.setCommandLine(`${verb}: refused by the broker: ${why}`);
        lineIsRole = false;
      }
    });
    if (!sent) {
      finish(id);
      if (!isProbe) {
        store.setCommandLine(`${verb}: not sent: no broker connection`);
        lineIsRole = false;
      }
      return null;
    }
    return id;
  }

  function probe() {
    if (probing) finish(probing);
    store.setRole(store.state.role.role === "operator" ? "operator" : "unknown",
      store.state.role.role === "operator" ? store.state.role.text : "asking the service…");
    probing = request("ping", true);
  }

  function finish(id) {
    const e = pending.get(id);
    if (!e) return null;
    clearTimeout(e.timer);
    pending.delete(id);
    if (id === probing) probing = null;
    return e;
  }

  function unanswered(id) {
    const e = finish(id);
    if (!e) return;
    if (e.probe) {
      decided("unknown", "commands unanswered: no reply within 5 s (asked again when the service state changes)");
    } else {
      store.setCommandLine(`${e.verb}: no reply within ${COMMAND_TIMEOUT_MS / 1000} s`);
      lineIsRole = false;
    }
  }

  /** A hilrig.reply/1 on our reply topic. */
  function onReply(p) {
    const e = typeof p.correlation_id === "string" ? finish(p.correlation_id) : null;
    if (!e) return; // an old probe's late reply, or another client's
    if (e.probe) {
      // any answer proves the broker let the command through and the reply back
      decided("operator", p.ok === true ? "operator" : `operator (ping: ${p.error || "refused"})`);
      return;
    }
    lineIsRole = false;
    store.setCommandLine(p.ok === true ? `${e.verb}: ok${resultText(p.result)}`
      : `${e.verb}: refused: ${p.error || "no reason given"}`);
  }

  function resultText(result) {
    if (!result || typeof result !== "object") return "";
    const parts = Object.entries(result)
      .filter(([, v]) => ["string", "number", "boolean"].includes(typeof v))
      .slice(0, 3).map(([k, v]) => `${k} ${v}`);
    return parts.length ? ` (${parts.join(", ")})` : "";
  }

  function confirmSend(v) {
    const rig = (store.state.config && store.state.config.rig_id) || "the rig";
    dialogText.textContent = `Send “${v.verb}” to ${rig}? This will ${v.what}.`;
    dialog.returnValue = "";
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "yes") return;
      store.setCommandLine(`${v.verb}: sent, waiting for the reply…`);
      lineIsRole = false;
      request(v.verb, false);
    }, { once: true });
    dialog.showModal();
  }

  return { connected, onReply };
}
