// Start-up: read config.json, build the panels, log in if the broker wants it, connect.
// The panels only know the store; this file is the one place that wires the connection,
// the message router and the panels together.

import { createStore } from "./store.js";
import { loadConfig } from "./config.js";
import { brokerUrl, createConnection } from "./connection.js";
import { createRouter } from "./messages.js";
import { askCredentials, loginAccepted } from "./login.js";
import { createLive } from "./live.js";
import { createStatus } from "./status.js";
import { createSession } from "./session.js";
import { createCaptures } from "./captures.js";
import { createDetail } from "./detail.js";
import { createTrend } from "./trend.js";
import { createExport } from "./export.js";
import { createEvents } from "./events.js";
import { createControls } from "./controls.js";

const VERSION = "1.1.0";

const store = createStore();
// Read-only handle for debugging and tests: the store, never the connection (which
// holds the credentials).
Object.defineProperty(window, "hilrigDashboard", {
  value: Object.freeze({ store, version: VERSION }),
  writable: false,
  configurable: false,
});

// The panels subscribe through this proxy, which forwards to whichever connection is
// current (a refused login replaces it); what they ask for is kept across the swap.
const subscriptions = new Map(); // topic -> qos
let conn = null;
const connProxy = {
  subscribe(topic, qos = 1) {
    subscriptions.set(topic, qos);
    if (conn) conn.subscribe(topic, qos);
  },
  unsubscribe(topic) {
    subscriptions.delete(topic);
    if (conn) conn.unsubscribe(topic);
  },
};

async function start() {
  let config;
  try {
    config = await loadConfig();
  } catch (err) {
    showFatal(`cannot start: ${err.message}`);
    return;
  }
  const prefix = config.prefix;

  createStatus({ store });
  const live = createLive({ store });
  createSession({ store, conn: connProxy, prefix });
  createCaptures({ store });
  createDetail({ store, conn: connProxy, prefix });
  const trend = createTrend({ store });
  createExport({ store, trend });
  createEvents({ store });
  const controls = createControls({ store, prefix });
  store.setConfig(config); // after the panels, which listen for it

  const route = createRouter({ store, prefix, telemetry: live.onTelemetry, reply: controls.onReply });
  for (const [t, qos] of [["status", 1], ["telemetry", 0], ["capture/+", 1], ["session/+", 1],
    ["session/+/result", 1], ["result/+/+", 1], ["events", 1]]) {
    connProxy.subscribe(`${prefix}/${t}`, qos);
  }

  const url = brokerUrl(config.broker, window.location);
  const login = config.broker.login === true;

  // the header's broker badge says "waiting for login" while the form is up
  function ask(error) {
    const answer = askCredentials(error);
    store.emit("broker");
    return answer;
  }

  // Credentials pass from the form to the client and are not kept here. A refused
  // CONNACK (at the start, or later on a reconnect after the password was changed) ends
  // that client and shows the form again.
  function connect(credentials) {
    conn = createConnection({
      store, url, protocol: config.broker.protocol, credentials,
      onMessage: route,
      onConnect: () => {
        if (login) loginAccepted();
        controls.connected(conn);
      },
      onAuthRefused: (why) => {
        conn = null;
        const error = `the broker refused the login: ${why}`;
        if (login) ask(error).then(connect);
        else if (config.broker.session) renewSession();
        else showFatal(`${error} (this dashboard is configured without a login)`);
      },
    });
    for (const [t, qos] of subscriptions) conn.subscribe(t, qos);
  }

  // The service restarted, and its embedded broker with a new page login: read the
  // one it gives now, and connect with it (a few seconds apart while it is away).
  function renewSession() {
    store.setBroker("reconnecting");
    setTimeout(async () => {
      try {
        config.broker.session = (await loadConfig()).broker.session;
      } catch {
        // the service is not back yet: try again
      }
      connect(config.broker.session);
    }, 3000);
  }

  if (login) {
    store.setBroker("offline");
    ask("").then(connect);
  }
  else connect(config.broker.session);
}

function showFatal(text) {
  const el = document.getElementById("banner-error");
  el.textContent = text;
  el.hidden = false;
}

start();
