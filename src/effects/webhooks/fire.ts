/**
 * A webhooks rule fired by a row change becomes a delivery (WIRE §5.5 webhooks[], §6.1):
 * the rule is looked up in the app's live manifest at fire time (a rule gone since the
 * write fires nothing), its target resolved (`url`, or `urlFromSetting` read from the
 * settings row now, failing closed; a relative `url` on its connection's instance), and its body built — the standard envelope, or the
 * rule's `bodyTemplate` rendered against the row. A target that cannot be resolved is
 * journaled as a failed delivery, so the owner sees why nothing arrived. The schedules
 * engine's webhook action builds its deliveries from the same target and body.
 */
import { and, eq, inArray } from "drizzle-orm";
import { config } from "../../config";
import { db, type Db } from "../../db/client";
import { apps, appVersions } from "../../db/apps-schema";
import { compileLive } from "../../apps/deploy";
import { appStore } from "../../apps/store";
import type { EffectChange, RowView } from "../../../durable-objects/app-store/contract";
import type { CompiledManifest, WebhookRule } from "../../manifest";
import { renderJsonTemplate } from "../../rules/templates";
import type { DeliveryRow } from "./deliveries";
import { createDelivery, type NewDelivery } from "./record";
import { isRelativeTarget } from "../../manifest/origins";
import { instanceTarget } from "../connections";

/** The settings row a manifest's `settingsCollection` holds (WIRE §5.1). */
export const SETTINGS_ROW_KEY = "install-config";

/** The row as the standard body carries it. */
export type EnvelopeRow = Pick<RowView, "key" | "data" | "version" | "author" | "created_at" | "updated_at">;

/**
 * The standard body of WIRE §6.1 (op `create`/`update` with the change's feed seq, or
 * `schedule` with none); `delivery_id` and `sent_at` are filled in per attempt.
 */
export function standardBody(appId: string, collection: string, op: string, feedSeq: number | null, row: EnvelopeRow): string {
  return JSON.stringify({
    app_id: appId, collection, op, feed_seq: feedSeq, delivery_id: null,
    row: { key: row.key, data: row.data, version: row.version, author: row.author, created_at: row.created_at, updated_at: row.updated_at },
    sent_at: null,
  });
}

export type Target = { url: string } | { failedWith: string };

type TargetRule = Pick<WebhookRule, "url" | "urlFromSetting" | "connection">;

/**
 * Where a rule's deliveries go: its `url` (a relative one on its connection's instance,
 * resolved now), or the `urlFromSetting` setting read now (failing closed).
 */
export async function resolveTarget(env: Env, app: typeof apps.$inferSelect, rule: TargetRule, settingsCollection: string | null): Promise<Target> {
  if (rule.url !== null) return isRelativeTarget(rule.url) ? instanceTarget(env, app.id, rule.connection, rule.url) : { url: rule.url };
  const setting = rule.urlFromSetting!;
  if (!settingsCollection || app.currentVersion === null) return { failedWith: `urlFromSetting: the app has no settings collection to read ${setting} from` };
  const answer = await appStore(env, app.id).getRow(
    { appId: app.id, version: app.currentVersion, principal: { kind: "owner", humanId: app.ownerHumanId } }, settingsCollection, SETTINGS_ROW_KEY,
  );
  const value = answer.ok && typeof answer.value.data === "object" && answer.value.data !== null && !Array.isArray(answer.value.data)
    ? (answer.value.data as Record<string, unknown>)[setting] : undefined;
  if (typeof value !== "string" || value.trim() === "") return { failedWith: `urlFromSetting: the setting ${setting} is not set` };
  return { url: value.trim() };
}

/** The url a delivery is journaled with: the resolved one, or what the rule named when it could not be resolved. */
export function journalUrl(target: Target, rule: TargetRule): string {
  return "url" in target ? target.url : rule.url ?? rule.urlFromSetting ?? "";
}

/** An app that fires webhooks (active or dormant) with its live manifest; null when there is none. */
export type FiringApp = { app: typeof apps.$inferSelect; manifest: CompiledManifest } | null;

/** The read of an app that fires webhooks with its live version, in one statement (a batch item for the consumer's reads). */
export function firingAppRead(d: Db, appId: string) {
  return d.select({ app: apps, version: appVersions }).from(apps)
    .leftJoin(appVersions, and(eq(appVersions.appId, apps.id), eq(appVersions.version, apps.currentVersion)))
    .where(and(eq(apps.id, appId), inArray(apps.status, ["active", "dormant"]))).limit(1);
}

/** The FiringApp firingAppRead found: its live manifest compiled (as liveManifest does), null when there is none. */
export function firingAppOf(env: Env, found: Awaited<ReturnType<typeof firingAppRead>>): FiringApp {
  const [row] = found;
  if (!row?.version) return null;
  const manifest = compileLive({ app: row.app, version: row.version }, config(env));
  return manifest ? { app: row.app, manifest } : null;
}

/** Looks up the app and its live manifest as the rules fire now (one D1 read). */
export async function firingApp(env: Env, appId: string): Promise<FiringApp> {
  return firingAppOf(env, await firingAppRead(db(env), appId));
}

/**
 * The delivery one outbox entry asks for, not yet recorded; null when nothing is to be
 * sent (the writer kept webhooks quiet, webhooks are off, the app or the rule is gone).
 * The consumer passes one lookup of the app for all the entries of a batch, and records
 * what they ask for together (record.ts).
 */
export async function deliveryInputForChange(
  env: Env, appId: string, source: string, ruleId: string, change: EffectChange, lookup: () => Promise<FiringApp> = () => firingApp(env, appId),
): Promise<NewDelivery | null> {
  if (change.suppressed || !config(env).flags.WEBHOOKS_ENABLED) return null;
  const firing = await lookup();
  if (!firing) return null;
  const { app, manifest } = firing;
  const rule = manifest.webhooks.find((candidate) => candidate.id === ruleId);
  if (!rule) return null;
  const target = await resolveTarget(env, app, rule, manifest.settingsCollection);
  return {
    appId, source, ruleId, collection: change.collection, rowKey: change.key, op: change.op, feedSeq: change.seq,
    url: journalUrl(target, rule), connection: rule.connection,
    payload: rule.bodyTemplate ? renderJsonTemplate(rule.bodyTemplate, change.data)
      : standardBody(appId, change.collection, change.op, change.seq, { ...change, updated_at: change.ts }),
    ...("failedWith" in target ? { failedWith: target.failedWith } : {}),
  };
}

/** Records the delivery one outbox entry asks for (or finds the one it made already); null when nothing is to be sent. */
export async function deliveryForChange(
  env: Env, appId: string, source: string, ruleId: string, change: EffectChange, lookup?: () => Promise<FiringApp>,
): Promise<DeliveryRow | null> {
  const input = await deliveryInputForChange(env, appId, source, ruleId, change, lookup);
  return input === null ? null : createDelivery(env, input);
}
