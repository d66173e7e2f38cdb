// Migration mode and unrestricted apps (issue 13 item 9), through the real paths: a write
// made in migration mode reaches the effect consumer and is recorded silent (no agent
// task), a write after the mode is off fires as usual, and the mode ends by itself at its
// TTL; an unrestricted private app's served CSP opens connect-src to the internet, only
// the owner's own session may turn it on, only for a private app with no live grant link,
// and minting a grant link or credential or leaving private turns it off again.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, type SignedIn } from "../helpers";
import { appCall } from "../serve/helpers";
import { ownerTasks, taskApp, taskManifest, tasksIn, write, type TaskApp } from "../tasks/helpers";
import { silentWrites } from "../../../src/apps/migration-mode";

type Mode = { app_id: string; enabled: boolean; started_at: string | null; ends_at: string | null };
type Unrestricted = { app_id: string; unrestricted: boolean; enabled_at: string | null };

function setMode(t: TaskApp, body: unknown): Promise<Response> {
  return call(`/v1/apps/${t.appId}/migration-mode`, { key: t.key, json: body });
}

function setUnrestricted(appId: string, human: SignedIn, enabled: boolean): Promise<Response> {
  return call(`/v1/apps/${appId}/unrestricted`, { session: human.session, json: { enabled } });
}

async function connectSrc(slug: string): Promise<string> {
  const res = await appCall(slug, "/");
  const csp = res.headers.get("content-security-policy") ?? "";
  return /connect-src ([^;]*)/.exec(csp)?.[1] ?? "";
}

/** A private app with a custom role (so grant links can be minted) and an agentTasks rule. */
async function privateApp(): Promise<TaskApp> {
  return taskApp(taskManifest(undefined, { roles: { guest: { label: "Guest" } } }));
}

describe("migration mode", { timeout: 60_000 }, () => {
  it("keeps a write's effects silent while on, fires them once off, and refuses bad bodies", async () => {
    const t = await taskApp();
    const on = await json<Mode>(await setMode(t, { enabled: true, ttl_seconds: 600, reason: "import" }), 200);
    expect(on.enabled).toBe(true);
    expect(Date.parse(on.ends_at!) - Date.parse(on.started_at!)).toBe(600_000);
    expect((await json<Mode>(await call(`/v1/apps/${t.appId}/migration-mode`, { key: t.key }), 200)).enabled).toBe(true);
    await write(t, "issues", { title: "quiet" }, "quiet");
    const off = await json<Mode>(await setMode(t, { enabled: false }), 200);
    expect(off).toEqual({ app_id: t.appId, enabled: false, started_at: null, ends_at: null });
    await write(t, "issues", { title: "loud" }, "loud");
    await tasksIn(t, "queued", 1);
    // The quiet write was flushed before the loud one: by now its entry is settled too.
    expect((await ownerTasks(t)).map((task) => task.row_key)).toEqual(["loud"]);

    for (const bad of [{}, { enabled: "yes" }, { enabled: true, ttl_seconds: 59 }, { enabled: true, ttl_seconds: 86_401 }, { enabled: true, extra: 1 }]) {
      await expectError(await setMode(t, bad), 400, "invalid_request");
    }
    expect((await json<Mode>(await call(`/v1/apps/${t.appId}/migration-mode`, { key: t.key }), 200)).enabled).toBe(false);
    await expectError(await call(`/v1/apps/app_missing/migration-mode`, { key: t.key, json: { enabled: true } }), 404, "app_not_found");
  });

  it("ends by itself at its TTL, and a second on extends the open span", async () => {
    const t = await taskApp();
    const first = await json<Mode>(await setMode(t, { enabled: true, ttl_seconds: 60 }), 200);
    const again = await json<Mode>(await setMode(t, { enabled: true, ttl_seconds: 120 }), 200);
    expect(again.started_at).toBe(first.started_at);
    expect(Date.parse(again.ends_at!)).toBeGreaterThan(Date.parse(first.ends_at!));
    const silent = await silentWrites(env, t.appId, first.started_at!);
    expect(silent(first.started_at!)).toBe(true);
    expect(silent(new Date(Date.parse(again.ends_at!) - 1).toISOString())).toBe(true);
    // At its end the mode is over: the write time is compared with the span's end.
    expect(silent(again.ends_at!)).toBe(false);
    expect(silent(new Date(Date.parse(first.started_at!) - 1).toISOString())).toBe(false);
  });
});

describe("unrestricted", { timeout: 60_000 }, () => {
  it("opens a private app's connect-src to the internet for the owner's session only, and grant links and credentials turn it off", async () => {
    const t = await privateApp();
    expect(await connectSrc(t.slug)).toBe("'self'");
    // An agent key may not turn it on (HSO).
    await expectError(await call(`/v1/apps/${t.appId}/unrestricted`, { key: t.key, json: { enabled: true } }), 403, "forbidden");
    expect(await connectSrc(t.slug)).toBe("'self'");
    const on = await json<Unrestricted>(await setUnrestricted(t.appId, t.human, true), 200);
    expect(on.unrestricted).toBe(true);
    expect(await connectSrc(t.slug)).toBe("'self' https: wss:");

    const grant = await json<Record<string, unknown>>(await call(`/v1/apps/${t.appId}/grants`, { key: t.key, json: { role: "guest" } }), 201);
    expect(grant.unrestricted_revoked).toBe(true);
    expect(typeof grant.unrestricted_notice).toBe("string");
    expect(await connectSrc(t.slug)).toBe("'self'");
    // With a live grant link it cannot come back.
    await expectError(await setUnrestricted(t.appId, t.human, true), 409, "conflict");
    expect((await json<Unrestricted>(await call(`/v1/apps/${t.appId}/unrestricted`, { key: t.key }), 200)).unrestricted).toBe(false);
    expect((await call(`/v1/apps/${t.appId}/grants/${grant.id as string}`, { key: t.key, method: "DELETE" })).ok).toBe(true);
    await json<Unrestricted>(await setUnrestricted(t.appId, t.human, true), 200);

    const credential = await json<Record<string, unknown>>(await call(`/v1/apps/${t.appId}/credentials`, { key: t.key, json: {} }), 201);
    expect(credential.unrestricted_revoked).toBe(true);
    const second = await json<Record<string, unknown>>(await call(`/v1/apps/${t.appId}/credentials`, { key: t.key, json: {} }), 201);
    expect(second.unrestricted_revoked).toBeUndefined();
  });

  it("refuses a public app and goes off when the app leaves private; off is idempotent", async () => {
    const t = await privateApp();
    await json(await setUnrestricted(t.appId, t.human, true), 200);
    const patched = await json<Record<string, unknown>>(await call(`/v1/apps/${t.appId}`, { key: t.key, method: "PATCH", json: { visibility: "public" } }), 200);
    expect(patched.unrestricted_revoked).toBe(true);
    await expectError(await setUnrestricted(t.appId, t.human, true), 409, "conflict");
    expect(await connectSrc(t.slug)).toBe("'self'");
    for (let i = 0; i < 2; i++) expect((await json<Unrestricted>(await setUnrestricted(t.appId, t.human, false), 200)).unrestricted).toBe(false);
    await expectError(await call(`/v1/apps/${t.appId}/unrestricted`, { session: t.human.session, json: { enabled: 1 } }), 400, "invalid_request");
  });
});
