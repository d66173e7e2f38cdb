// The import lease (src/apps/archive/lease.ts): what the cron does with an import the relay
// died in the middle of. While it fills its app the import owns it (no person does, so it
// is listed nowhere: import-visibility.test.ts). A lease and the app its import made are
// left alone while the lease is fresh (the import may still be working) and, once it has
// lapsed, the sweep purges that app and discards the staged entries. An app the import
// already handed over is whole and stays, even if the import died before it released its
// lease. The end-to-end case (a real relay process SIGKILLed mid-import) is
// test/reliability/import-kill.test.ts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, count, json } from "../helpers";
import { MANIFEST, owner, type Owner } from "./fixtures";
import { LEASE_LAPSE_MS, takeImportLease, undoAbandonedImports, type ImportLease } from "../../../src/apps/archive/lease";
import { newStagingPrefix } from "../../../src/apps/archive/staging";
import { createApp } from "../../../src/apps/deploy";
import { handOverApp } from "../../../src/db/apps";

const listed = async (key: string) => (await json<{ items: Array<{ id: string }> }>(await call("/v1/apps?limit=200", { key }), 200)).items.map((a) => a.id);

/** The app an import makes first, before it fills it: owned by the import. */
async function importsApp(who: Owner, lease: ImportLease): Promise<string> {
  const created = await createApp(env, { agentId: who.agent.agent_id, ownerHumanId: lease.owner }, { html: "<h1>half</h1>", manifest: MANIFEST });
  return String((created.body as Record<string, unknown>).app_id);
}

const lapsed = () => Date.now() + LEASE_LAPSE_MS + 60_000;

describe("import lease", { timeout: 60_000 }, () => {
  it("the sweep purges the half-made app and staging of an import whose lease lapsed, and only then", async () => {
    const who = await owner();
    const prefix = newStagingPrefix();
    await env.BLOBS.put(`${prefix}rows/000000.ndjson`, "{}\n");
    const lease = await takeImportLease(env.BLOBS, prefix);
    const half = await importsApp(who, lease);
    expect(await listed(who.key)).not.toContain(half);

    await undoAbandonedImports(env, Date.now());
    expect(await count("apps", "id = ?1", half)).toBe(1);
    expect(await env.BLOBS.head(`${prefix}rows/000000.ndjson`)).not.toBeNull();

    expect(await undoAbandonedImports(env, lapsed())).toBeGreaterThanOrEqual(1);
    expect(await count("apps", "id = ?1", half)).toBe(0);
    expect(await count("app_versions", "app_id = ?1", half)).toBe(0);
    expect((await call(`/v1/apps/${half}?include_deleted=true`, { key: who.key })).status).toBe(404);
    expect(await env.BLOBS.head(`${prefix}rows/000000.ndjson`)).toBeNull();
  });

  it("an app handed over stays, whether or not its import released the lease", async () => {
    const who = await owner();
    const released = await takeImportLease(env.BLOBS, newStagingPrefix());
    const diedAfterHandOver = await takeImportLease(env.BLOBS, newStagingPrefix());
    const whole = [await importsApp(who, released), await importsApp(who, diedAfterHandOver)];
    expect(await handOverApp(env, whole[0], released.owner, who.human.humanId, 100)).toBe(true);
    expect(await handOverApp(env, whole[1], diedAfterHandOver.owner, who.human.humanId, 100)).toBe(true);
    await released.release();
    await undoAbandonedImports(env, lapsed());
    expect(await listed(who.key)).toEqual(expect.arrayContaining(whole));
  });
});
