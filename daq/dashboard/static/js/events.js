// The event list (newest first, the store keeps at most 100) and the counter of messages
// the page could not read.

import { clock } from "./format.js";
import { coalesce, fill, h } from "./dom.js";

export function createEvents({ store }) {
  const list = document.getElementById("events");
  const ignored = document.getElementById("ignored");

  store.on("events", coalesce(() => {
    const events = store.state.events;
    if (!events.length) {
      fill(list, h("li", { class: "muted" }, "no events yet"));
      return;
    }
    fill(list, events.map((e) => {
      const level = ["info", "warning", "error"].includes(e.level) ? e.level : "info";
      const ids = [e.session_id && `session ${e.session_id}`, e.capture_id && `capture ${e.capture_id}`]
        .filter(Boolean).join(" · ");
      return h("li", { class: `event level-${level}`, dataset: { level, code: e.code || "" } },
        h("span", { class: "event-time" }, clock(e.time || e.receivedAt)),
        h("span", { class: "badge", dataset: { state: level } }, level),
        h("code", { class: "event-code" }, e.code || ""),
        h("span", { class: "event-message" }, e.message || ""),
        ids ? h("span", { class: "muted small event-ids" }, ids) : null);
    }));
  }));
  fill(list, h("li", { class: "muted" }, "no events yet"));

  store.on("ignored", coalesce(() => {
    ignored.dataset.count = String(store.state.ignored);
    ignored.textContent = `ignored messages: ${store.state.ignored}`;
    ignored.title = "messages that were not JSON objects or had a schema this page does not know";
  }));
}
