/**
 * An import's lease, so that an import the relay died in the middle of is undone. An
 * import creates its app before filling it (timezone, attachments, rows page by page), so
 * a crash midway left an app with some of its rows, listed and readable, that nothing
 * removed; its staged entries waited a day for the staging sweep. The import now keeps a
 * small R2 object, `import-leases/<import id>`, naming its staging folder and (once made)
 * its app, and writes it again while it works. The import removes it when it ends, whatever
 * the outcome; a lease not renewed for LEASE_LAPSE_MS belongs to an import that died, and
 * the cron's `imports` sweep purges its app and discards its staging folder.
 */
import { purgeApp } from "../trash";
import { discardStaged } from "./staging";

const PREFIX = "import-leases/";
/** A live import renews its lease at least this often while it works. */
const RENEW_EVERY_MS = 20_000;
/** Far longer than any one step of an import (staging an entry, importing a page of rows). */
export const LEASE_LAPSE_MS = 5 * 60_000;

interface LeaseBody {
  staging: string;
  app_id: string | null;
}

export interface ImportLease {
  /** Names the app the import created: from now on a crash purges it. */
  claimApp(appId: string): Promise<void>;
  /** Writes the lease again when it is due (cheap to call often). */
  renew(): Promise<void>;
  /** The import ended (either way): nothing is left to undo. */
  release(): Promise<void>;
}

const leaseKey = (stagingPrefix: string) => `${PREFIX}${stagingPrefix.replace(/^imports\//, "").replace(/\/$/, "")}`;

export async function takeImportLease(bucket: R2Bucket, stagingPrefix: string): Promise<ImportLease> {
  const key = leaseKey(stagingPrefix);
  const body: LeaseBody = { staging: stagingPrefix, app_id: null };
  let writtenAt = 0;
  const write = async () => {
    await bucket.put(key, JSON.stringify(body));
    writtenAt = Date.now();
  };
  await write();
  return {
    async claimApp(appId) {
      body.app_id = appId;
      await write();
    },
    async renew() {
      if (Date.now() - writtenAt >= RENEW_EVERY_MS) await write();
    },
    async release() {
      await bucket.delete(key);
    },
  };
}

function leaseBody(text: string): LeaseBody | null {
  try {
    const parsed = JSON.parse(text) as Partial<LeaseBody>;
    if (typeof parsed.staging !== "string" || !parsed.staging.startsWith("imports/")) return null;
    return { staging: parsed.staging, app_id: typeof parsed.app_id === "string" ? parsed.app_id : null };
  } catch {
    return null;
  }
}

/** The cron's undo of imports that died midway: their half-made apps purged, their staging discarded; answers how many. */
export async function undoAbandonedImports(env: Env, now: number): Promise<number> {
  let undone = 0;
  let cursor: string | undefined;
  do {
    const listed = await env.BLOBS.list({ prefix: PREFIX, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const object of listed.objects) {
      if (object.uploaded.getTime() >= now - LEASE_LAPSE_MS) continue;
      const lease = leaseBody(await (await env.BLOBS.get(object.key))?.text() ?? "");
      if (lease?.app_id) await purgeApp(env, lease.app_id);
      if (lease) await discardStaged(env.BLOBS, lease.staging);
      await env.BLOBS.delete(object.key);
      undone += 1;
    }
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  return undone;
}
