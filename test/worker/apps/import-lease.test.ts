// The import lease (src/apps/archive/lease.ts): what the cron does with an import the relay
// died in the middle of. A lease naming a half-made app and a staging folder is left alone
// while it is fresh (the import may still be working) and, once it has lapsed, the sweep
// purges the app (gone from its owner's list and detail) and discards the staged entries.
// A lease whose import was released leaves nothing for the sweep. The end-to-end case (a
// real relay process SIGKILLed mid-import) is test/reliability/import-kill.test.ts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers";
import { deploy, owner } from "./fixtures";
import { LEASE_LAPSE_MS, takeImportLease, undoAbandonedImports } from "../../../src/apps/archive/lease";
import { newStagingPrefix } from "../../../src/apps/archive/staging";

const listed = async (key: string) => (await json<{ items: Array<{ id: string }> }>(await call("/v1/apps?limit=200", { key }), 200)).items.map((a) => a.id);

describe("import lease", { timeout: 60_000 }, () => {
  it("the sweep purges the half-made app and staging of an import whose lease lapsed, and only then", async () => {
    const who = await owner();
    const half = await deploy(who.key);
    const prefix = newStagingPrefix();
    await env.BLOBS.put(`${prefix}rows/000000.ndjson`, "{}\n");
    const lease = await takeImportLease(env.BLOBS, prefix);
    await lease.claimApp(half.app_id);

    await undoAbandonedImports(env, Date.now());
    expect(await listed(who.key)).toContain(half.app_id);
    expect(await env.BLOBS.head(`${prefix}rows/000000.ndjson`)).not.toBeNull();

    expect(await undoAbandonedImports(env, Date.now() + LEASE_LAPSE_MS + 60_000)).toBeGreaterThanOrEqual(1);
    expect(await listed(who.key)).not.toContain(half.app_id);
    expect((await call(`/v1/apps/${half.app_id}?include_deleted=true`, { key: who.key })).status).toBe(404);
    expect(await env.BLOBS.head(`${prefix}rows/000000.ndjson`)).toBeNull();
  });

  it("a released lease leaves the app and nothing for the sweep", async () => {
    const who = await owner();
    const whole = await deploy(who.key);
    const lease = await takeImportLease(env.BLOBS, newStagingPrefix());
    await lease.claimApp(whole.app_id);
    await lease.release();
    await undoAbandonedImports(env, Date.now() + LEASE_LAPSE_MS + 60_000);
    expect(await listed(who.key)).toContain(whole.app_id);
  });
});
