/**
 * The app shapes of WIRE §2.14: AppSummary for lists, AppDetail for one app. Usage
 * figures (rows, bytes) come from the app's AppStore; everything else from D1.
 */
import * as z from "zod";
import type { Config } from "../config";
import type { AppRow } from "../db/apps";
import { appUrl } from "./urls";
import { purgeAfter } from "./trash";

export const appSummary = z.object({
  id: z.string(), slug: z.string(), visibility: z.enum(["private", "link", "public"]),
  status: z.enum(["active", "dormant", "archived", "suspended", "deleted"]), url: z.string(),
  has_share_token: z.boolean(), created_at: z.string(), last_activity_at: z.string(),
  /** Only on deleted apps: when it went to the trash and when the sweep purges it. */
  deleted_at: z.string().optional(), purge_after: z.string().optional(),
});

export const appDetail = appSummary.extend({
  manifest: z.record(z.string(), z.unknown()).nullable(), current_version: z.number().int().nullable(),
  owner_human_id: z.string(), row_count: z.number().int(), storage_bytes: z.string(), timezone: z.string().nullable(),
  deleted_at: z.string().nullable(),
  /** The outbound webhook signing secret, once a deploy with webhooks minted it (WIRE §6.1). */
  webhook_secret: z.string().optional(),
});

export function viewSummary(cfg: Config, app: AppRow): z.infer<typeof appSummary> {
  return {
    id: app.id, slug: app.slug, visibility: app.visibility, status: app.status, url: appUrl(cfg, app.slug),
    has_share_token: app.shareTokenHash !== null, created_at: app.createdAt, last_activity_at: app.lastActivityAt,
    ...(app.status === "deleted" && app.deletedAt ? { deleted_at: app.deletedAt, purge_after: purgeAfter(app.deletedAt) } : {}),
  };
}

export function viewDetail(
  cfg: Config, app: AppRow, manifest: Record<string, unknown> | null, usage: { rowCount: number; storageBytes: number }, webhookSecret: string | null = null,
): z.infer<typeof appDetail> {
  return {
    ...viewSummary(cfg, app), manifest, current_version: app.currentVersion, owner_human_id: app.ownerHumanId,
    row_count: usage.rowCount, storage_bytes: String(usage.storageBytes), timezone: app.timezone, deleted_at: app.deletedAt,
    ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
  };
}
