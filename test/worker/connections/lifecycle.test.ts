// Connections follow their app's owner: an accepted ownership transfer deletes every
// connection of the app and its pending consents in the accept batch (their secrets are
// the previous owner's, which the new owner's webhooks must not send), a refused accept
// deletes nothing; purging the app deletes them too; a trashed app's connection routes
// answer soft_deleted.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, signIn } from "../helpers";
import { accept, offer } from "../account/fixtures";
import { oauthBody, setup, staticBody, storedRows } from "./fixtures";

async function pendingConsents(appId: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM connection_authorizations WHERE app_id = ?1").bind(appId).first<number>("n")) ?? 0;
}

describe("connections and the app's lifecycle", () => {
  it("an accepted transfer deletes the app's connections and pending consents; a refused one keeps them", async () => {
    const s = await setup();
    await s.create(staticBody());
    await s.create(oauthBody());
    expect((await call(`${s.path}/calendar/authorize`, { session: s.who.human.session })).status).toBe(302);
    expect(await pendingConsents(s.app.app_id)).toBe(1);

    const recipient = await signIn();
    const stranger = await signIn();
    const { token } = await offer({ who: s.who, app: s.app, path: `/v1/apps/${s.app.app_id}`, key: s.who.agent.api_key }, recipient.email);
    await expectError(await accept(stranger, token), 403, "forbidden");
    expect(await storedRows(s.app.app_id)).toHaveLength(2);

    await json(await accept(recipient, token), 200);
    expect(await storedRows(s.app.app_id)).toEqual([]);
    expect(await pendingConsents(s.app.app_id)).toBe(0);
  });

  it("purging the app deletes its connections; a trashed app's connection routes answer soft_deleted", async () => {
    const s = await setup();
    await s.create(staticBody());
    await s.create(oauthBody());
    expect((await call(`${s.path}/calendar/authorize`, { session: s.who.human.session })).status).toBe(302);
    const appPath = `/v1/apps/${s.app.app_id}`;
    await json(await call(appPath, { key: s.who.agent.api_key, method: "DELETE" }), 200);
    await expectError(await s.call(), 410, "soft_deleted");
    await expectError(await s.call("", { json: staticBody({ name: "other" }) }), 410, "soft_deleted");
    expect(await storedRows(s.app.app_id)).toHaveLength(2);

    await json(await call(`${appPath}/purge`, { key: s.who.agent.api_key, method: "POST" }), 200);
    expect(await storedRows(s.app.app_id)).toEqual([]);
    expect(await pendingConsents(s.app.app_id)).toBe(0);
  });
});
