/**
 * Anonymous in-page uploads (WIRE §4.3, §5.6): a visitor may upload to
 * `/_svc/attachments?collection=<name>` only when that collection lets `anyone` write,
 * and then only images, each within ANON_UPLOAD_MAX_BYTES, all of them together within
 * ANON_BYTES_PER_APP, and ANON_UPLOADS_PER_IP_PER_APP_DAY per address per app per day.
 * The address is never stored: uploads carry a sha256 of address, app and UTC day, which
 * is all the daily count needs.
 */
import { and, count, eq, inArray, isNull, sql } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { attachments } from "../db/attachments-schema";
import { sha256Hex } from "../auth/tokens";

export const ANONYMOUS_KINDS = ["anon", "visitor"] as const;

export async function anonAddressHash(ip: string, appId: string, now = Date.now()): Promise<string> {
  return sha256Hex(`${ip}\n${appId}\n${new Date(now).toISOString().slice(0, 10)}`);
}

/** Refuses what the anonymous limits do not allow; run after sniffing. */
export async function requireAnonymousAllowance(env: Env, appId: string, addressHash: string, mime: string, size: number): Promise<void> {
  const { limits } = config(env);
  if (!mime.startsWith("image/")) throw new RelayError("upload_forbidden", "Visitors may upload images only.", { mime });
  if (size > limits.ANON_UPLOAD_MAX_BYTES) {
    throw new RelayError("attachment_size_exceeded", `A visitor's upload may be at most ${limits.ANON_UPLOAD_MAX_BYTES} bytes.`, { size, limit: limits.ANON_UPLOAD_MAX_BYTES });
  }
  const [today] = await db(env).select({ n: count() }).from(attachments).where(and(eq(attachments.appId, appId), eq(attachments.anonAddressHash, addressHash)));
  if ((today?.n ?? 0) >= limits.ANON_UPLOADS_PER_IP_PER_APP_DAY) {
    throw new RelayError("rate_limited", `At most ${limits.ANON_UPLOADS_PER_IP_PER_APP_DAY} visitor uploads per address per app per day.`, { limit: limits.ANON_UPLOADS_PER_IP_PER_APP_DAY, scope: "perIpPerDay" });
  }
  const [held] = await db(env).select({ total: sql<number>`coalesce(sum(${attachments.size}), 0)` }).from(attachments)
    .where(and(eq(attachments.appId, appId), inArray(attachments.uploaderKind, [...ANONYMOUS_KINDS]), isNull(attachments.deletedAt)));
  if (Number(held?.total ?? 0) + size > limits.ANON_BYTES_PER_APP) {
    throw new RelayError("quota_exceeded", `Visitors' uploads to this app may hold at most ${limits.ANON_BYTES_PER_APP} bytes.`, { scope: "anonymous", limit: limits.ANON_BYTES_PER_APP });
  }
}
