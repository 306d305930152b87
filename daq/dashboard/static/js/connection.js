// The one MQTT.js client of the page: connect over WebSocket, keep reconnecting, say
// which state the link is in, and subscribe again after every new connection.
//
// Why subscriptions are kept here and not left to MQTT.js's own `resubscribe`: the set
// changes at run time (the selected session's captures, the open capture's overlays), and
// MQTT.js forgets a topic whose SUBACK failed; a set of our own, sent whole on every
// CONNACK, makes "after a reconnect we listen to exactly what we want" easy to see.
//
// MQTT 5 or 3.1.1: Mosquitto speaks 5 and tells a refused PUBLISH by its reason code,
// which the role probe needs; the embedded fallback broker (amqtt) speaks 3.1.1 only and
// either refuses a v5 CONNECT or never answers it. With config protocol null we start
// with 5 and switch when a broker *answered the WebSocket* but not the v5 CONNECT; a
// WebSocket that never opened is a broker that is down, not one that dislikes v5.

/* global mqtt */

import { createKeepaliveTimer } from "./keepalive.js";

const RECONNECT_MS = 1500;
const CONNECT_TIMEOUT_MS = 4000;
// CONNACK codes that mean "these credentials will not do": 3.1.1 (4, 5) and 5 (134, 135,
// 140 bad authentication method)
const AUTH_REFUSALS = new Set([4, 5, 134, 135, 140]);
// CONNACK codes that mean "not this protocol version": 3.1.1's 1, 5's 132
const VERSION_REFUSALS = new Set([1, 132]);

export function randomHex(bytes) {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** ws://host:port/path from the config's broker block; host null = the page's host. */
export function brokerUrl(broker, location) {
  const scheme = broker.scheme === "wss" ? "wss" : "ws";
  let host = broker.host || location.hostname;
  if (host.includes(":") && !host.startsWith("[")) host = `[${host}]`; // a bare IPv6 address
  const port = Number.isInteger(broker.port) ? `:${broker.port}` : "";
  let path = typeof broker.path === "string" && broker.path ? broker.path : "/";
  if (!path.startsWith("/")) path = `/${path}`;
  return `${scheme}://${host}${port}${path}`;
}

/**
 * Opens the connection. `credentials` ({username, password} or null) stay in this
 * closure and in MQTT.js's options: memory only, never in the URL.
 * Callbacks: onMessage(topic, bytes, packet), onConnect(protocolVersion),
 * onAuthRefused(text) (the client has been ended; ask for credentials again).
 */
export function createConnection({ store, url, protocol, credentials, onMessage, onConnect, onAuthRefused }) {
  const clientId = `hilrig-dash-${randomHex(4)}`;
  const auto = protocol !== 4 && protocol !== 5;
  let version = auto ? 5 : protocol;
  const wanted = new Map(); // topic -> qos
  let attempt = { opened: false, connacked: false, switched: false };
  let ended = false;
  const keepaliveTimer = createKeepaliveTimer();

  const options = {
    clientId,
    clean: true,
    protocolVersion: version,
    reconnectPeriod: RECONNECT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // long enough that a hidden tab, whose timers Chromium runs about once a minute, still
    // pings in time while the service is offline and nothing else arrives (1.5 x 120 s)
    keepalive: 120,
    timerVariant: keepaliveTimer, // see keepalive.js: no blob: worker under our CSP
    resubscribe: false, // see the header: we send our own set on every connect
    // retry after a refused CONNACK too (a broker starting up, "server busy", v5 refused);
    // a refused login ends the client in the error handler, so it is not retried
    reconnectOnConnackError: true,
    // Observe whether the WebSocket itself opened (see the header on protocol fallback).
    createWebsocket(wsUrl, protocols) {
      const ws = new WebSocket(wsUrl, protocols);
      const mine = attempt;
      ws.addEventListener("open", () => { mine.opened = true; });
      return ws;
    },
  };
  if (credentials) {
    options.username = credentials.username;
    options.password = credentials.password;
  }

  store.setBroker("connecting", version, url);
  const client = mqtt.connect(url, options);

  client.on("connect", () => {
    attempt.connacked = true;
    store.setBroker("connected", client.options.protocolVersion);
    for (const [topic, qos] of wanted) sendSubscribe(topic, qos);
    onConnect(client.options.protocolVersion);
  });

  client.on("reconnect", () => {
    attempt = { opened: false, connacked: false, switched: false };
    store.setBroker("reconnecting", client.options.protocolVersion);
  });

  client.on("offline", () => {
    if (!ended) store.setBroker("offline");
  });

  client.on("close", () => {
    if (!auto || ended) return;
    // A broker that opened the WebSocket but gave no CONNACK: try the other version next.
    if (attempt.opened && !attempt.connacked) switchVersion();
    // A 3.1.1 link that was up has dropped: the broker behind the port may have changed
    // (the service's embedded broker gone, Mosquitto back), so ask for 5 first again.
    else if (attempt.connacked && version === 4) {
      version = 5;
      client.options.protocolVersion = 5;
    }
  });

  // MQTT.js emits "error" for refused CONNACKs, connect timeouts and stream errors; an
  // EventEmitter without an error listener would throw, and none of these are bugs of
  // the page, so they are handled here and never logged.
  client.on("error", (err) => {
    const code = err && typeof err.code === "number" ? err.code : null;
    if (code !== null && AUTH_REFUSALS.has(code)) {
      end();
      store.setBroker("offline");
      // Mosquitto answers a wrong password with "not authorized" too, so say both
      onAuthRefused(code === 5 || code === 135 ? "not authorized (wrong user name or password, or no access)"
        : "bad user name or password");
      return;
    }
    // the retry itself is MQTT.js's (reconnectOnConnackError): one reconnect timer, where
    // a reconnect() of our own here raced the old socket's close and dropped the new link
    if (code !== null && VERSION_REFUSALS.has(code) && auto) switchVersion();
  });

  client.on("message", (topic, payload, packet) => onMessage(topic, payload, packet));
  client.on("packetreceive", keepaliveTimer.poll);

  function switchVersion() {
    if (attempt.switched) return; // a refusal and its close are one failed attempt
    attempt.switched = true;
    version = version === 5 ? 4 : 5;
    client.options.protocolVersion = version;
  }

  function sendSubscribe(topic, qos, done) {
    client.subscribe(topic, { qos }, (err) => {
      // A refused subscription (SUBACK >= 0x80) is the broker's ACL: not an error of the
      // page. Only the reply topic's refusal matters, and controls.js learns it here.
      const refused = Boolean(err && typeof err.code === "number");
      if (refused) store.emit("subscribe-refused", { topic, code: err.code });
      if (done) done(refused);
    });
  }

  /**
   * Adds a topic to the set. With `done`, the SUBSCRIBE is sent now even if the topic is
   * already in the set, and done(refused) is called on its SUBACK: the role probe must
   * not publish before its reply topic is in place (a broker may route a fast reply
   * before it has finished an earlier SUBSCRIBE; amqtt does).
   */
  function subscribe(topic, qos = 1, done = null) {
    const known = wanted.has(topic);
    wanted.set(topic, qos);
    if (client.connected && (!known || done)) sendSubscribe(topic, qos, done);
  }

  function unsubscribe(topic) {
    if (!wanted.delete(topic)) return;
    if (client.connected) client.unsubscribe(topic, () => {});
  }

  /** QoS 1 publish; cb(err) gets MQTT 5's refusal (err.code = reason code). False when offline. */
  function publish(topic, text, cb) {
    if (!client.connected) return false;
    client.publish(topic, text, { qos: 1 }, (err) => cb(err || null));
    return true;
  }

  function end() {
    ended = true;
    client.end(true);
    keepaliveTimer.stop();
  }

  return {
    clientId,
    subscribe,
    unsubscribe,
    publish,
    end,
    get connected() { return client.connected; },
    get protocolVersion() { return client.options.protocolVersion; },
  };
}
