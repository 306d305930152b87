// config.json, served by the Python side next to the page: which rig, which topic prefix,
// where the broker's WebSocket listener is and whether it wants a login (or, for the
// service's embedded broker, the login it gave this page). Checked here so
// a wrong config says so on the page instead of failing somewhere deeper.

export async function loadConfig() {
  let res;
  try {
    // relative: the page may be served under a path prefix by a reverse proxy
    res = await fetch("config.json", { cache: "no-store", credentials: "same-origin" });
  } catch {
    throw new Error("config.json could not be fetched (is the hilrig service running?)");
  }
  if (!res.ok) throw new Error(`config.json: HTTP ${res.status}`);
  let c;
  try {
    c = await res.json();
  } catch {
    throw new Error("config.json is not JSON");
  }
  if (!c || typeof c !== "object" || !c.broker || typeof c.broker !== "object") {
    throw new Error("config.json has no broker block");
  }
  const rig = typeof c.rig_id === "string" && c.rig_id ? c.rig_id : "rig1";
  const b = c.broker;
  return {
    rig_id: rig,
    prefix: typeof c.prefix === "string" && c.prefix ? c.prefix.replace(/\/+$/, "") : `hilrig/${rig}`,
    software_version: typeof c.software_version === "string" ? c.software_version : "",
    broker: {
      scheme: b.scheme === "wss" ? "wss" : "ws",
      host: typeof b.host === "string" && b.host ? b.host : null,
      port: Number.isInteger(b.port) ? b.port : 9001,
      path: typeof b.path === "string" && b.path ? b.path : "/",
      login: b.login === true,
      protocol: b.protocol === 4 || b.protocol === 5 ? b.protocol : null,
      // the page's own login to the embedded broker of the service that served it
      session: typeof b.username === "string" && typeof b.password === "string"
        ? { username: b.username, password: b.password } : null,
    },
  };
}
