/**
 * Agent task lease credentials (`Bearer svcc_…`, WIRE §2.8) resolved to the caller they
 * stand for: one task's app, the rule's reads and writes (write implies read, never
 * delete: src/permissions/authorize.ts), with that app's owner's authority and no more.
 * The credential holds exactly while its task is leased under it: an ack or nack forgets
 * its hash, a lapsed lease ends it, and a new lease gets a new one. Anything else is 401
 * `unauthorized`. Only the collection endpoints take it (src/http/middleware/auth.ts).
 */
import { RelayError } from "../errors";
import { and, eq } from "drizzle-orm";
import { db } from "../db/client";
import { apps } from "../db/apps-schema";
import { agentTasks } from "../db/tasks-schema";
import type { AppRow } from "../db/apps";
import type { LeaseCaller } from "./callers";
import { SECRET_KINDS, isSecretOf, sha256Hex } from "./tokens";

/** Whether a bearer is shaped as a lease credential (prefix only; the lookup judges the rest). */
export function isLeaseCredential(bearer: string | null): bearer is string {
  return bearer !== null && bearer.startsWith(SECRET_KINDS.leaseCredential);
}

const REFUSED = "This lease credential does not hold: its task was acked or nacked, or its lease ended. Claim the task again for a fresh one.";

export async function resolveLeaseCredential(env: Env, token: string, now = Date.now()): Promise<{ lease: LeaseCaller; ownerHumanId: string; app: AppRow }> {
  if (!isSecretOf("leaseCredential", token)) throw new RelayError("unauthorized", REFUSED, { credential: "lease" });
  const found = (await db(env).select({ task: agentTasks, app: apps }).from(agentTasks).innerJoin(apps, eq(apps.id, agentTasks.appId))
    .where(and(eq(agentTasks.leaseTokenHash, await sha256Hex(token)), eq(agentTasks.status, "leased"))).limit(1))[0];
  if (!found || (found.task.leaseExpiresAt ?? 0) <= now) throw new RelayError("unauthorized", REFUSED, { credential: "lease" });
  const { task, app } = found;
  return {
    lease: { taskId: task.id, appId: task.appId, reads: JSON.parse(task.reads) as string[], writes: JSON.parse(task.writes) as string[] },
    ownerHumanId: app.ownerHumanId,
    app,
  };
}
