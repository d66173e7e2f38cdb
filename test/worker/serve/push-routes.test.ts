// The app origin's browser push paths (`/_svc/push`, behind the page script's
// `service.push`): the VAPID key (the same one /v1 serves), saving a subscription for the
// signed-in person (201, then 200 for the same endpoint) and deleting it (204, idempotent);
// and every refusal a catalogue error that changes nothing: an anonymous caller, a bad
// body, no endpoint to delete, another origin, another method, and an app that is not
// public with offline: true (push_not_available).
import { describe, expect, it } from "vitest";
import { json } from "../helpers";
import { appCall, deploy, owner, ownerToken, type Deployed, type Owner } from "./helpers";
import { browser, relayPublicKey, rowFor } from "../effects/push-service";

function pushManifest(offline: boolean) {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": { app: { name: "Pushy" }, collections: {}, ...(offline ? { offline: true } : {}) },
  };
}

async function pushApp(offline = true, visibility = "public"): Promise<{ who: Owner; app: Deployed; token: string }> {
  const who = await owner();
  const app = await deploy(who, { manifest: pushManifest(offline), visibility });
  return { who, app, token: await ownerToken(who.human, app.slug) };
}

async function refused(res: Response, status: number, code: string): Promise<void> {
  expect((await json<{ error: { code: string } }>(res, status)).error.code).toBe(code);
}

describe("/_svc/push on an app origin", () => {
  it("serves the relay's key, saves the person's subscription and deletes it", async () => {
    const { who, app, token } = await pushApp();
    expect(await json(await appCall(app.slug, "/_svc/push", { token }), 200)).toEqual({ public_key: await relayPublicKey(who.human) });
    const b = await browser(`https://push.example.com/send/${crypto.randomUUID()}`);
    const body = { endpoint: b.target.endpoint, expirationTime: null, keys: b.target.keys };
    const saved = await json<{ id: string; endpoint: string }>(await appCall(app.slug, "/_svc/push/subscriptions", { token, json: body }), 201);
    expect(saved.endpoint).toBe(b.target.endpoint);
    expect(await rowFor(b.target.endpoint)).toBe(who.human.humanId);
    await json(await appCall(app.slug, "/_svc/push/subscriptions", { token, json: body }), 200);
    for (let i = 0; i < 2; i += 1) {
      expect((await appCall(app.slug, "/_svc/push/subscriptions", { token, method: "DELETE", json: { endpoint: b.target.endpoint } })).status).toBe(204);
    }
    expect(await rowFor(b.target.endpoint)).toBeNull();
  });

  it("refuses with catalogue errors and keeps nothing", async () => {
    const { app, token } = await pushApp();
    const b = await browser(`https://push.example.com/send/${crypto.randomUUID()}`);
    const body = { endpoint: b.target.endpoint, keys: b.target.keys };
    await refused(await appCall(app.slug, "/_svc/push"), 401, "unauthorized");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { json: body }), 401, "unauthorized");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { token, json: { ...body, keys: { p256dh: "short", auth: b.target.keys.auth } } }), 400, "invalid_request");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { token, json: { ...body, extra: 1 } }), 400, "invalid_request");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { token, json: { ...body, endpoint: "https://10.0.0.1/push" } }), 400, "invalid_request");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { token, body: "not json", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { token, method: "DELETE", json: {} }), 400, "invalid_request");
    await refused(await appCall(app.slug, "/_svc/push/subscriptions", { token, json: body, headers: { origin: "https://elsewhere.example" } }), 403, "forbidden");
    await refused(await appCall(app.slug, "/_svc/push", { token, method: "PUT", json: {} }), 405, "method_not_allowed");
    expect(await rowFor(b.target.endpoint)).toBeNull();

    for (const [offline, visibility] of [[false, "public"], [true, "private"]] as const) {
      const other = await pushApp(offline, visibility);
      await refused(await appCall(other.app.slug, "/_svc/push", { token: other.token }), 409, "push_not_available");
      await refused(await appCall(other.app.slug, "/_svc/push/subscriptions", { token: other.token, json: body }), 409, "push_not_available");
    }
    expect(await rowFor(b.target.endpoint)).toBeNull();
  });
});
