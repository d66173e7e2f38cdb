/**
 * An app's outbound webhook signing secret (WIRE §6.1–6.2): minted on the first deploy
 * whose manifest has webhooks (and shown in that deploy's answer and on `GET /v1/apps/:id`
 * to the owner and its agents), rotated only on request with a grace window in which the
 * previous secret still signs. At most two are ever live.
 */
import { eq } from "drizzle-orm";
import { db, type Db } from "../../db/client";
import { webhookSecrets } from "../../db/effects-schema";
import { RelayError } from "../../errors";
import { nowIso } from "../../auth/tokens";
import type { DeployGuard } from "../../db/apps";

export const GRACE_DEFAULT_SECONDS = 3600;
export const GRACE_MAX_SECONDS = 86_400;

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/**
 * The statement that mints the app's secret unless it has one, carrying `guard` so it
 * rides in the deploy's own D1 batch (src/db/apps.ts DeployGuard): the version that
 * needs the secret never goes live without it. `mintedSecret` reads its result.
 */
export function mintSecretStatement(env: Env, appId: string, guard: DeployGuard): D1PreparedStatement {
  return env.DB.prepare(
    `INSERT INTO webhook_secrets (app_id, secret, created_at) SELECT ?, ?, ? WHERE ${guard.condition} ON CONFLICT (app_id) DO NOTHING RETURNING secret`,
  ).bind(appId, newSecret(), nowIso(), ...guard.binds);
}

/** The secret a mintSecretStatement minted, or null when the app already had one. */
export function mintedSecret(result: D1Result): string | null {
  return (result.results[0] as { secret: string } | undefined)?.secret ?? null;
}

/** A purge: the app's secret (current and previous) is gone with it. */
export async function deleteAppWebhookSecret(env: Env, appId: string): Promise<void> {
  await db(env).delete(webhookSecrets).where(eq(webhookSecrets.appId, appId));
}

/** The app's current secret, or null when none was ever minted. */
export async function webhookSecretOf(env: Env, appId: string): Promise<string | null> {
  return (await secretRowOf(env, appId))?.secret ?? null;
}

export type SecretRow = typeof webhookSecrets.$inferSelect;

/** The read of the app's secret row, alone or as an item of a D1 batch. */
export function secretRowRead(d: Db, appId: string) {
  return d.select().from(webhookSecrets).where(eq(webhookSecrets.appId, appId)).limit(1);
}

/** The app's secret row (current and previous), undefined when none was ever minted. */
export async function secretRowOf(env: Env, appId: string): Promise<SecretRow | undefined> {
  return (await secretRowRead(db(env), appId))[0];
}

/** The secrets of `row` that sign at `now`: the current one, and the previous while its grace lasts. */
export function liveSecrets(row: SecretRow | undefined, now: number): string[] {
  if (!row) return [];
  const previousLive = row.previousSecret !== null && row.previousExpiresAt !== null && Date.parse(row.previousExpiresAt) > now;
  return previousLive ? [row.secret, row.previousSecret!] : [row.secret];
}


export interface RotatedSecret {
  webhook_secret: string;
  webhook_secret_previous: string;
  webhook_secret_previous_expires_at: string;
  rotated_at: string;
}

/**
 * A new current secret; the old one signs beside it for `graceSeconds`. Rotating again
 * within the grace replaces the retained one (never more than two live). 409 when the app
 * never had a secret (no deploy with webhooks yet).
 */
export async function rotateWebhookSecret(env: Env, appId: string, graceSeconds: number, now = Date.now()): Promise<RotatedSecret> {
  const row = await secretRowOf(env, appId);
  if (!row) throw new RelayError("conflict", "This app has no webhook secret yet: deploy a manifest with webhooks first.");
  const rotatedAt = new Date(now).toISOString();
  const previousExpiresAt = new Date(now + graceSeconds * 1000).toISOString();
  const secret = newSecret();
  await db(env).update(webhookSecrets)
    .set({ secret, previousSecret: row.secret, previousExpiresAt, rotatedAt })
    .where(eq(webhookSecrets.appId, appId));
  return { webhook_secret: secret, webhook_secret_previous: row.secret, webhook_secret_previous_expires_at: previousExpiresAt, rotated_at: rotatedAt };
}
