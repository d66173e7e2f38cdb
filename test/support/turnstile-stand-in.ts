// A stand-in for Cloudflare Turnstile's browser script, served from loopback so the
// Chromium tests never reach the network. It imitates the third-party service, not the
// relay: `window.turnstile` with render / execute / reset / getResponse / remove, explicit
// rendering with `execution: "execute"`, and Turnstile's documented dummy token
// (`XXXX.DUMMY.TOKEN.XXXX`, what its test site keys hand out and what a development relay
// accepts). Like the real widget, a widget holding a token gives no new one until it is
// reset, so a page that reused a spent widget would get no token. Every call is logged in
// `window.turnstile.log` for the tests to read.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const STAND_IN_PATH = "/turnstile/v0/api.js";
export const DUMMY_TOKEN = "XXXX.DUMMY.TOKEN.XXXX";

const SCRIPT = `(() => {
  const TOKEN = ${JSON.stringify(DUMMY_TOKEN)};
  const widgets = new Map();
  const log = [];
  let next = 0;
  const find = (ref) => {
    for (const w of widgets.values()) if (w.id === ref || w.container === ref) return w;
    return null;
  };
  const run = (w) => {
    w.running = true;
    setTimeout(() => {
      if (!widgets.has(w.id) || !w.running) return;
      w.running = false;
      w.token = TOKEN;
      if (typeof w.params.callback === "function") w.params.callback(TOKEN);
    }, 20);
  };
  window.turnstile = {
    log,
    render(container, params) {
      const el = typeof container === "string" ? document.querySelector(container) : container;
      if (!el || !params || !params.sitekey) throw new Error("turnstile stand-in: render needs a container and a sitekey");
      const w = { id: "stand-in-" + ++next, container: el, params, token: undefined, running: false };
      widgets.set(w.id, w);
      log.push({ call: "render", sitekey: params.sitekey, execution: params.execution, appearance: params.appearance });
      if (params.execution !== "execute") run(w);
      return w.id;
    },
    execute(ref) {
      const w = find(typeof ref === "string" && !widgets.has(ref) ? document.querySelector(ref) : ref);
      log.push({ call: "execute" });
      if (!w) throw new Error("turnstile stand-in: no such widget");
      if (w.running || w.token !== undefined) {
        console.warn("turnstile stand-in: execute() on a widget that already ran; reset() it first");
        return;
      }
      run(w);
    },
    reset(ref) {
      const w = find(ref);
      log.push({ call: "reset" });
      if (w) { w.running = false; w.token = undefined; }
    },
    getResponse(ref) {
      const w = find(ref);
      return w ? w.token : undefined;
    },
    remove(ref) {
      const w = find(ref);
      log.push({ call: "remove" });
      if (w) widgets.delete(w.id);
    },
  };
})();
`;

export interface StandIn {
  /** The script's URL (what the relay's TURNSTILE_SCRIPT_URL is set to). */
  url: string;
  close(): Promise<void>;
}

export async function startTurnstileStandIn(): Promise<StandIn> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && new URL(req.url ?? "/", "http://stand-in").pathname === STAND_IN_PATH) {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" });
      res.end(SCRIPT);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${STAND_IN_PATH}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
