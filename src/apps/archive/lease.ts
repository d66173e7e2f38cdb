/**
 * An import's lease, so that an import the relay died in the middle of is undone. An
 * import creates its app before filling it (timezone, attachments, rows page by page);
 * until it is whole the app is owned by the import (`import:<import id>`, src/db/apps.ts),
 * so no person sees it, and the import hands it over when it is done. A crash midway left
 * such an app behind, and its staged entries waited a day for the staging sweep. The import
 * now keeps a small R2 object, `import-leases/<import id>`, naming its staging folder, and
 * writes it again while it works. The import removes it when it ends, whatever the
 * outcome; a lease not renewed for LEASE_LAPSE_MS belongs to an import that died, and the
 * cron's `imports` sweep purges every app the import still owns and discards its staging
 * folder. An app already handed over is whole and stays.
 */
import { appIdsOfOwner, importOwner } from "../../db/apps";
import { purgeApp } from "../trash";
import { discardStaged } from "./staging";

const PREFIX = "import-leases/";
/** A live import renews its lease at least this often while it works. */
const RENEW_EVERY_MS = 20_000;
/** Far longer than any one step of an import (staging an entry, importing a page of rows). */
export const LEASE_LAPSE_MS = 5 * 60_000;

interface LeaseBody {
  staging: string;
}

export interface ImportLease {
  /** Who owns the new app until the import hands it to its person: the import itself. */
  owner: string;
  /** Writes the lease again when it is due (cheap to call often). */
  renew(): Promise<void>;
  /** The import ended (either way): nothing is left to undo. */
  release(): Promise<void>;
}

/** `imports/<import id>/` → `<import id>`. */
const importIdOf = (stagingPrefix: string) => stagingPrefix.replace(/^imports\//, "").replace(/\/$/, "");

export async function takeImportLease(bucket: R2Bucket, stagingPrefix: string): Promise<ImportLease> {
  const key = `${PREFIX}${importIdOf(stagingPrefix)}`;
  const body: LeaseBody = { staging: stagingPrefix };
  let writtenAt = 0;
  const write = async () => {
    await bucket.put(key, JSON.stringify(body));
    writtenAt = Date.now();
  };
  await write();
  return {
    owner: importOwner(importIdOf(stagingPrefix)),
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
    return { staging: parsed.staging };
  } catch {
    return null;
  }
}

/** The cron's undo of imports that died midway: the apps they still own purged, their staging discarded; answers how many. */
export async function undoAbandonedImports(env: Env, now: number): Promise<number> {
  let undone = 0;
  let cursor: string | undefined;
  do {
    const listed = await env.BLOBS.list({ prefix: PREFIX, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const object of listed.objects) {
      if (object.uploaded.getTime() >= now - LEASE_LAPSE_MS) continue;
      const lease = leaseBody(await (await env.BLOBS.get(object.key))?.text() ?? "");
      if (lease) {
        for (const appId of await appIdsOfOwner(env, importOwner(importIdOf(lease.staging)))) await purgeApp(env, appId);
        await discardStaged(env.BLOBS, lease.staging);
      }
      await env.BLOBS.delete(object.key);
      undone += 1;
    }
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  return undone;
}
