/**
 * When a delivery fails for good, the app's owner hears of it: one mail per rule per
 * window (`WEBHOOKS_FAILURE_NOTIFY_WINDOW_SECONDS`), however many deliveries of that rule
 * fail inside it. A mail that cannot be sent is logged; it never changes the journal.
 */
import { errorLogLine } from "../../db/query-errors";
import { and, eq, lt, or } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { apps } from "../../db/apps-schema";
import { webhookFailureNotices } from "../../db/effects-schema";
import { getHuman } from "../../db/humans";
import { mailer } from "../../mail/mailer";
import { webhookFailedMail } from "../../mail/effect-templates";
import type { DeliveryRow } from "./deliveries";

export async function mailOwnerOfFailure(env: Env, delivery: DeliveryRow, reason: string, now = Date.now()): Promise<void> {
  try {
    const windowStart = new Date(now - config(env).limits.WEBHOOKS_FAILURE_NOTIFY_WINDOW_SECONDS * 1000).toISOString();
    const at = new Date(now).toISOString();
    // Claim the window for this rule: a row older than the window is taken over, a fresh one wins nothing.
    const claimed = await db(env).insert(webhookFailureNotices).values({ appId: delivery.appId, ruleId: delivery.ruleId, notifiedAt: at })
      .onConflictDoUpdate({
        target: [webhookFailureNotices.appId, webhookFailureNotices.ruleId],
        set: { notifiedAt: at },
        setWhere: lt(webhookFailureNotices.notifiedAt, windowStart),
      }).returning();
    if (claimed.length === 0) return;
    const app = (await db(env).select().from(apps).where(and(eq(apps.id, delivery.appId), or(eq(apps.status, "active"), eq(apps.status, "dormant")))).limit(1))[0];
    const owner = app ? await getHuman(env, app.ownerHumanId) : undefined;
    if (!app || !owner) return;
    await mailer(env).send(webhookFailedMail(owner.email, app.slug, delivery, reason, config(env).apiOrigin));
  } catch (err) {
    console.error(`webhooks: could not mail the owner of app ${delivery.appId} about delivery ${delivery.id}`, errorLogLine(err));
  }
}
