/**
 * What purging an app removes of its operating surface (src/db/operate-schema.ts): its
 * migration-mode spans, the unrestricted flag, its custom domains (so the names can be
 * bound again elsewhere), its page-view rollups and today's visitor hashes, and the
 * screenshot cards cached in R2.
 */
import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { appDomains, appMigrationSpans, appPageViews, appUnrestricted, appVisitorDays } from "../db/operate-schema";
import { screenshotPrefix } from "./screenshot";

export async function deleteAppOperations(env: Env, appId: string): Promise<void> {
  const d = db(env);
  await d.batch([
    d.delete(appMigrationSpans).where(eq(appMigrationSpans.appId, appId)),
    d.delete(appUnrestricted).where(eq(appUnrestricted.appId, appId)),
    d.delete(appDomains).where(eq(appDomains.appId, appId)),
    d.delete(appPageViews).where(eq(appPageViews.appId, appId)),
    d.delete(appVisitorDays).where(eq(appVisitorDays.appId, appId)),
  ]);
  for (let cursor: string | undefined; ;) {
    const page = await env.BLOBS.list({ prefix: screenshotPrefix(appId), cursor });
    if (page.objects.length) await env.BLOBS.delete(page.objects.map((object) => object.key));
    if (!page.truncated) break;
    cursor = page.cursor;
  }
}
