// The relay's push service worker (`/_svc/sw.js`) in real Chromium against a real local
// relay: a deployed public app's page registers it for the whole origin without an
// error, and a push delivered to it through the browser's own DevTools protocol (no push
// service, nothing leaves loopback) shows a notification with the payload's title and
// body, keeping the link only when it is a path on the app's own origin.
import type { CDPSession, Page, Worker } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, useBrowser } from "./support";
import { waitFor } from "../support/wait";

const { newPage } = useBrowser();

interface Deployed { app_id: string; slug: string; url: string }

async function deployPublic(key: string): Promise<Deployed> {
  const res = await api<Deployed>("/v1/apps", {
    key,
    body: {
      html: `<!doctype html><html><head><meta charset="utf-8"><title>Push app</title></head><body><h1 id="content">Push app</h1></body></html>`,
      manifest: { $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name: "Push app" }, collections: {}, offline: true } },
      visibility: "public",
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

interface Shown { title: string; body: string; tag: string; data: { link: string | null } | null }

/** The notifications the registration is showing, newest last. */
function shown(p: Page): Promise<Shown[]> {
  return p.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    const list = await registration.getNotifications();
    return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as { link: string | null } | null }));
  });
}

/**
 * The app's running service worker, with its `showNotification` wrapped to record each
 * tag once the browser has displayed it (the promise resolves after display). Reading
 * `getNotifications()` while a notification is stored but not yet displayed makes Chromium
 * drop it as no longer on screen, so the test polls this record, never the list, and reads
 * the list only once every push it sent has been displayed.
 */
async function instrumentedWorker(p: Page, script: string): Promise<Worker> {
  const worker = await waitFor(() => p.context().serviceWorkers().find((candidate) => candidate.url() === script), { message: `the service worker ${script} running` });
  await worker.evaluate(() => {
    const scope = globalThis as unknown as {
      displayedTags: string[];
      registration: { showNotification(title: string, options?: { tag?: string }): Promise<void> };
    };
    scope.displayedTags = [];
    const show = scope.registration.showNotification.bind(scope.registration);
    scope.registration.showNotification = (title, options) => show(title, options).then(() => { scope.displayedTags.push(options?.tag ?? ""); });
  });
  return worker;
}

/** Tags the instrumented worker has displayed so far, in order. */
function displayedTags(worker: Worker): Promise<string[]> {
  return worker.evaluate(() => (globalThis as unknown as { displayedTags: string[] }).displayedTags);
}

/** The DevTools session's id for the registration whose scope is `scope`. */
async function registrationId(cdp: CDPSession, scope: string): Promise<string> {
  let found: string | null = null;
  cdp.on("ServiceWorker.workerRegistrationUpdated", (event: { registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> }) => {
    for (const r of event.registrations) if (r.scopeURL === scope && !r.isDeleted) found = r.registrationId;
  });
  await cdp.send("ServiceWorker.enable");
  return waitFor(() => found, { message: `a service worker registration for ${scope}` });
}

describe("the push service worker in Chromium", () => {
  it("registers on a public app's page for the whole origin and shows pushed notifications, same-origin links only", async () => {
    const { key } = await ownerWithAgent();
    const app = await deployPublic(key);
    const origin = new URL(app.url).origin;

    const p = await newPage();
    const errors: string[] = [];
    p.on("console", (msg) => { if (msg.type() === "error") errors.push(msg.text()); });
    p.on("pageerror", (err) => errors.push(err.message));
    await p.context().grantPermissions(["notifications"], { origin });
    await p.goto(app.url);
    await p.locator("#content").waitFor();

    const registered = await p.evaluate(async () => {
      const registration = await navigator.serviceWorker.register("/_svc/sw.js", { scope: "/" });
      const ready = await navigator.serviceWorker.ready;
      return { scope: registration.scope, readyScope: ready.scope, script: ready.active?.scriptURL ?? null, secure: isSecureContext };
    });
    expect(registered).toEqual({ scope: `${origin}/`, readyScope: `${origin}/`, script: `${origin}/_svc/sw.js`, secure: true });

    const cdp = await p.context().newCDPSession(p);
    const workerErrors: string[] = [];
    cdp.on("ServiceWorker.workerErrorReported", (event: { errorMessage: { errorMessage: string } }) => workerErrors.push(event.errorMessage.errorMessage));
    const id = await registrationId(cdp, `${origin}/`);

    const pushes = [
      { title: "Push app", body: "New entry in todos", link: "/todos?view=new#top", tag: "rule-1" },
      { title: "Push app", body: "Elsewhere", link: "https://evil.example/steal", tag: "rule-2" },
      { title: "Push app", body: "Protocol-relative", link: "//evil.example/steal", tag: "rule-3" },
      { title: "Push app", body: "Script", link: "javascript:alert(1)", tag: "rule-4" },
      { title: "Push app", body: "No link", link: null, tag: "rule-5" },
    ];
    const worker = await instrumentedWorker(p, `${origin}/_svc/sw.js`);
    // One push at a time, each seen displayed before the next is sent, so a failure names
    // the push; what the worker and the page reported says why.
    const displayed = async (tag: string, times: number, what: string) => waitFor(
      async () => (await displayedTags(worker)).filter((shownTag) => shownTag === tag).length >= times,
      { timeout: 20_000, interval: 100, message: what },
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; displayed: ${JSON.stringify(await displayedTags(worker).catch(() => "unreadable"))}; worker errors: ${JSON.stringify(workerErrors)}; page errors: ${JSON.stringify(errors)}`);
    });
    for (const payload of pushes) {
      await cdp.send("ServiceWorker.deliverPushMessage", { origin, registrationId: id, data: JSON.stringify(payload) });
      await displayed(payload.tag, 1, `the push tagged ${payload.tag} displayed`);
    }
    const list = await shown(p);
    expect(list).toHaveLength(pushes.length);
    const byTag = Object.fromEntries(list.map((n) => [n.tag, n]));
    expect(byTag["rule-1"]).toEqual({ title: "Push app", body: "New entry in todos", tag: "rule-1", data: { link: "/todos?view=new#top" } });
    for (const tag of ["rule-2", "rule-3", "rule-4", "rule-5"]) expect(byTag[tag].data, tag).toEqual({ link: null });

    // The same tag replaces the notification instead of adding one.
    await cdp.send("ServiceWorker.deliverPushMessage", { origin, registrationId: id, data: JSON.stringify({ ...pushes[0], body: "Another entry in todos" }) });
    await displayed("rule-1", 2, "the second push tagged rule-1 displayed");
    const replaced = await shown(p);
    expect(replaced).toHaveLength(pushes.length);
    expect(replaced.find((n) => n.tag === "rule-1")?.body).toBe("Another entry in todos");

    expect(workerErrors).toEqual([]);
    expect(errors).toEqual([]);
  });
});
