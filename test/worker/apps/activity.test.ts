// An app's last_activity_at moves on row writes through either door (the /v1 API and the
// app origin's /_svc/c), after the response and at most once a minute per app; reads and
// refused writes leave it alone.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers";
import { appCall, deploy, manifest, owner, ownerToken } from "../serve/helpers";

const LONG_AGO = "2000-01-01T00:00:00.000Z";
const NOTES = { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } };

async function backdate(appId: string): Promise<void> {
  await env.DB.prepare("UPDATE apps SET last_activity_at = ?2 WHERE id = ?1").bind(appId, LONG_AGO).run();
}

async function lastActivity(key: string, appId: string): Promise<string> {
  return (await json<{ last_activity_at: string }>(await call(`/v1/apps/${appId}`, { key }), 200)).last_activity_at;
}

describe("last_activity_at follows row writes", () => {
  it("an API write moves it; reads, refused writes and a second write within the minute do not write again", async () => {
    const who = await owner();
    const key = who.agent.api_key;
    const app = await deploy(who, { manifest: manifest({}, { collections: NOTES }) });
    await backdate(app.app_id);
    await json(await call(`/v1/apps/${app.app_id}/collections/notes`, { key }), 200);
    expect(await call(`/v1/apps/${app.app_id}/collections/nope`, { key, json: { data: { n: 1 } } }).then((r) => r.status)).toBe(404);
    expect(await lastActivity(key, app.app_id)).toBe(LONG_AGO);

    const before = Date.now();
    await json(await call(`/v1/apps/${app.app_id}/collections/notes`, { key, json: { data: { n: 1 } } }), 201);
    const moved = Date.parse(await lastActivity(key, app.app_id));
    expect(moved).toBeGreaterThanOrEqual(before - 1000);
    expect(moved).toBeLessThanOrEqual(Date.now());

    // Within the minute this isolate does not write the time again.
    await backdate(app.app_id);
    await json(await call(`/v1/apps/${app.app_id}/collections/notes/batch`, { key, json: { rows: [{ data: { n: 2 } }] } }), 200);
    expect(await lastActivity(key, app.app_id)).toBe(LONG_AGO);
  });

  it("a write from the app's page moves it too", async () => {
    const who = await owner();
    const app = await deploy(who, { manifest: manifest({}, { collections: NOTES }) });
    const token = await ownerToken(who.human, app.slug);
    await backdate(app.app_id);
    const before = Date.now();
    expect((await appCall(app.slug, "/_svc/c/notes", { token, json: { data: { n: 1 } } })).status).toBe(201);
    expect(Date.parse(await lastActivity(who.agent.api_key, app.app_id))).toBeGreaterThanOrEqual(before - 1000);
  });
});
