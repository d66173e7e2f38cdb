/**
 * A schedule rule's webhook action (WIRE §5.5 schedules[], §6.1): one row's delivery in
 * the webhook journal, built the way a webhooks rule builds its own (src/effects/webhooks/
 * fire.ts: the same target resolution, failing closed, and the same standard body, here
 * with op `schedule` and no feed seq, unless the rule has a `bodyTemplate`). The delivery
 * is unique by its source, `schedule:<rule>:<row>:<date>`, and is then sent, signed and
 * retried like any other.
 */
import type { RowView } from "../../../durable-objects/app-store/contract";
import type { AppRow } from "../../db/apps";
import type { ScheduleAction } from "../../manifest";
import { renderJsonTemplate } from "../../rules/templates";
import type { DeliveryRow } from "../webhooks/deliveries";
import { createDelivery } from "../webhooks/record";
import { journalUrl, resolveTarget, standardBody } from "../webhooks/fire";

export type WebhookAction = Extract<ScheduleAction, { kind: "webhook" }>;

/** The webhook op of a schedule-fired delivery (WIRE §6.1). */
export const SCHEDULE_OP = "schedule";

export function scheduleSource(ruleId: string, rowKey: string, day: string): string {
  return `schedule:${ruleId}:${rowKey}:${day}`;
}

/** Records the delivery one row's firing asks for (or finds the one it made already). */
export async function scheduleDelivery(
  env: Env, app: AppRow, settingsCollection: string | null, rule: { id: string; collection: string; action: WebhookAction }, row: RowView, day: string,
): Promise<DeliveryRow> {
  const { action } = rule;
  const target = await resolveTarget(env, app, action, settingsCollection);
  return createDelivery(env, {
    appId: app.id, source: scheduleSource(rule.id, row.key, day), ruleId: rule.id, collection: rule.collection, rowKey: row.key,
    op: SCHEDULE_OP, feedSeq: null, url: journalUrl(target, action), connection: action.connection,
    payload: action.bodyTemplate ? renderJsonTemplate(action.bodyTemplate, row.data) : standardBody(app.id, rule.collection, SCHEDULE_OP, null, row),
    ...("failedWith" in target ? { failedWith: target.failedWith } : {}),
  });
}
