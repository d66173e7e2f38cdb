// The page script's `service.push` (WIRE §4.2) in real Chromium against a real local
// relay: the owner of a public offline app clicks a button that calls `push.enable()`;
// the relay's service worker is registered for the origin, the subscription is saved for
// the owner (a write then makes the relay push to it: a push service on 127.0.0.1 receives
// a VAPID-signed aes128gcm request at the subscription's endpoint), `status()` reads
// `enabled`, and `disable()` deletes it (saving the same subscription again is a new one,
// 201). A page of an app without `offline: true` is refused `push_not_available` before
// any prompt, and an anonymous viewer `unauthorized`.
//
// One piece is played by the test: the browser's push service registration. Chromium's
// `pushManager.subscribe` asks Google's push service for an endpoint (and refuses outright
// in the incognito contexts Playwright opens), which a test that never leaves loopback
// cannot reach. So an init script gives `PushManager` a `subscribe`/`getSubscription` that
// makes the subscription the way a browser does (a fresh P-256 ECDH key and 16-byte auth
// secret from WebCrypto) with an endpoint on the test's own push service. Everything else
// — the permission, the service worker, the page script, the relay — is the real thing.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, ownerWithAgent, signInHere, useBrowser } from "./support";
import { waitFor } from "../support/wait";

const { newPage } = useBrowser();

type Push = { url: string; headers: IncomingHttpHeaders; bytes: number };
const pushes: Push[] = [];
const pushService = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    pushes.push({ url: req.url ?? "", headers: req.headers, bytes: Buffer.concat(chunks).byteLength });
    res.writeHead(201).end();
  });
});
let pushBase = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => pushService.listen(0, "127.0.0.1", resolve));
  pushBase = `http://127.0.0.1:${(pushService.address() as AddressInfo).port}/push/`;
});
afterAll(() => new Promise<void>((resolve) => {
  pushService.closeAllConnections();
  pushService.close(() => resolve());
}));

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Push</title></head><body>
<button id="enable">Notify me</button> <button id="disable">Stop</button> <output id="state"></output>
<script>
  const show = (value) => { document.getElementById("state").textContent = value; };
  const run = (call) => call().then(show, (err) => show("error:" + err.code));
  document.getElementById("enable").onclick = () => run(() => service.push.enable());
  document.getElementById("disable").onclick = () => run(() => service.push.disable());
  service.ready.then(() => { document.body.dataset.ready = service.session.kind; });
</script></body></html>`;

function manifest(offline: boolean) {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": {
      app: { name: "Push page" },
      ...(offline ? { offline: true } : {}),
      collections: { notes: { read: ["anyone"], write: ["owner"], update: ["owner"], delete: ["owner"] } },
      notify: offline
        ? [{ on: "create", collection: "notes", to: ["owner"], channels: ["push"], subject: "New note", body: "A note", excludeActor: false, link: "/" }]
        : [],
    },
  };
}

async function deploy(key: string, offline: boolean): Promise<{ app_id: string; url: string }> {
  const res = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: manifest(offline), visibility: "public" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The stand-in for the browser's push service registration (see the header). */
function standInPushService(endpointBase: string): void {
  const b64 = (bytes: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  let current: PushSubscription | null = null;
  PushManager.prototype.getSubscription = async () => current;
  PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
    if (Notification.permission !== "granted") throw new DOMException("Registration failed - permission denied", "NotAllowedError");
    const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]) as CryptoKeyPair;
    const keys = { p256dh: b64(await crypto.subtle.exportKey("raw", pair.publicKey)), auth: b64(crypto.getRandomValues(new Uint8Array(16))) };
    const endpoint = endpointBase + crypto.randomUUID();
    const serverKey = options?.applicationServerKey as Uint8Array;
    const made = {
      endpoint, expirationTime: null,
      options: { userVisibleOnly: true, applicationServerKey: serverKey.slice().buffer },
      toJSON: () => ({ endpoint, expirationTime: null, keys }),
      unsubscribe: async () => {
        current = null;
        return true;
      },
    };
    current = made as unknown as PushSubscription;
    return current;
  };
}

async function signedInPage(email: string, url: string, origin: string): Promise<Page> {
  const p = await newPage();
  await p.context().grantPermissions(["notifications"], { origin });
  await p.addInitScript(standInPushService, pushBase);
  await p.goto(url);
  await p.locator('body[data-ready="anonymous"]').waitFor();
  await p.evaluate(() => (window as unknown as { service: { session: { login(): void } } }).service.session.login());
  await signInHere(p, email);
  await p.locator('body[data-ready="owner"]').waitFor({ timeout: 15_000 });
  return p;
}

const state = (p: Page) => p.locator("#state").textContent();
const pushStatus = (p: Page) => p.evaluate(() => (window as unknown as { service: { push: { status(): Promise<string> } } }).service.push.status());
const savedSubscription = (p: Page) => p.evaluate(async () => (await (await navigator.serviceWorker.getRegistration("/"))?.pushManager.getSubscription())?.toJSON() ?? null);

/** Saves a subscription through the app origin as the page's own session would: 201 new, 200 already saved. */
function saveAgain(p: Page, subscription: unknown): Promise<number> {
  return p.evaluate(async (body) => {
    const token = localStorage.getItem("service.session");
    const res = await fetch("/_svc/push/subscriptions", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return res.status;
  }, subscription);
}

describe("service.push in Chromium", { timeout: 60_000 }, () => {
  it("enable registers the relay's worker and saves the subscription the relay then pushes to; disable deletes it", async () => {
    const { email, key } = await ownerWithAgent("push");
    const app = await deploy(key, true);
    const origin = new URL(app.url).origin;
    const p = await signedInPage(email, app.url, origin);
    expect(await pushStatus(p)).toBe("disabled");

    await p.locator("#enable").click();
    await waitFor(async () => (await state(p)) === "enabled", { timeout: 15_000, message: `push.enable() resolving (state: ${await state(p)})` });
    const worker = await p.evaluate(async () => (await navigator.serviceWorker.getRegistration("/"))?.active?.scriptURL ?? null);
    expect(worker).toBe(`${origin}/_svc/sw.js`);
    expect(await pushStatus(p)).toBe("enabled");
    const subscription = await savedSubscription(p) as { endpoint: string };
    expect(subscription.endpoint.startsWith(pushBase)).toBe(true);

    // The relay pushes to the saved subscription when a note is written.
    const note = await api(`/v1/apps/${app.app_id}/collections/notes`, { key, body: { data: { text: "hello" } } });
    expect(note.status, JSON.stringify(note.body)).toBe(201);
    const { public_key: publicKey } = await p.evaluate(async () => (await fetch("/_svc/push", { headers: { authorization: `Bearer ${localStorage.getItem("service.session")}` } })).json()) as { public_key: string };
    const push = await waitFor(() => pushes.find((hit) => subscription.endpoint.endsWith(hit.url)), { timeout: 20_000, message: "the relay's push at the subscription's endpoint" });
    expect(push.headers["content-encoding"]).toBe("aes128gcm");
    expect(push.headers.authorization).toMatch(new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${publicKey}$`));
    expect(push.bytes).toBeGreaterThan(86);

    // Saving it again only updates it: it is stored for the owner.
    expect(await saveAgain(p, subscription)).toBe(200);

    await p.locator("#disable").click();
    await waitFor(async () => (await state(p)) === "disabled", { timeout: 15_000, message: "push.disable() resolving" });
    expect(await savedSubscription(p)).toBeNull();
    // Gone from the relay: the same subscription saved again is a new one.
    expect(await saveAgain(p, subscription)).toBe(201);
  });

  it("an app without offline: true refuses push_not_available, and an anonymous viewer is refused before any prompt", async () => {
    const { email, key } = await ownerWithAgent("push-off");
    const plain = await deploy(key, false);
    const p = await signedInPage(email, plain.url, new URL(plain.url).origin);
    await p.locator("#enable").click();
    await waitFor(async () => (await state(p)) === "error:push_not_available", { timeout: 15_000, message: "push.enable() refused on an app without offline" });
    expect(await savedSubscription(p)).toBeNull();

    const offline = await deploy(key, true);
    const q = await newPage();
    await q.addInitScript(standInPushService, pushBase);
    await q.goto(offline.url);
    await q.locator('body[data-ready="anonymous"]').waitFor();
    expect(await pushStatus(q)).toBe("prompt");
    await q.locator("#enable").click();
    await waitFor(async () => (await state(q)) === "error:unauthorized", { timeout: 15_000, message: "push.enable() refused to an anonymous viewer" });
    expect(await q.evaluate(() => Notification.permission)).toBe("default");
  });
});
