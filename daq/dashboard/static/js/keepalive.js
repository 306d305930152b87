// The timer MQTT.js runs its keepalive on (its `timerVariant` option).
//
// In a browser MQTT.js would run that timer in a Web Worker made from a blob: URL, so
// that a hidden tab's throttled timers cannot starve the keepalive; this page's CSP
// forbids such a worker (worker-src falls back to script-src 'self'). Plain timers in a
// tab hidden for a while fire about once a minute, which would let the broker drop an
// overnight dashboard. So this timer is polled twice: by a 1 s interval, and on every
// packet received. Telemetry arrives ten times a second whether the tab is visible or
// not, and each arrival is a chance to run a keepalive tick that is due.

export function createKeepaliveTimer() {
  const timers = new Map(); // id -> { fn, every, due }
  let nextId = 1;

  function poll() {
    const now = performance.now();
    for (const t of [...timers.values()]) {
      if (now < t.due) continue;
      // never catch up several ticks at once: MQTT.js counts ticks, and three in a row
      // without a PINGRESP in between would count as a dead connection
      t.due = now + t.every;
      t.fn();
    }
  }

  const interval = setInterval(poll, 1000);

  return {
    set(fn, ms) {
      const id = nextId++;
      timers.set(id, { fn, every: ms, due: performance.now() + ms });
      return id;
    },
    clear(id) {
      timers.delete(id);
    },
    poll,
    stop() {
      clearInterval(interval);
      timers.clear();
    },
  };
}
