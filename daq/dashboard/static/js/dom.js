// Building DOM without innerHTML: payload text (reasons, prompts, warnings) goes in as
// text nodes only, so nothing a broker says can become markup.

/**
 * h("tr", {class: "x", dataset: {captureId: "c1"}, onclick: fn}, "text", child, ...)
 * Attributes: class, dataset, on<event> handlers, hidden, and anything else as an attribute.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (v === true) el.setAttribute(k, "");
      else el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/**
 * Calls fn at most once per animation frame however often it is asked: a burst of
 * retained messages after a reconnect redraws a table once, not once per message.
 */
export function coalesce(fn) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fn();
    });
  };
}
