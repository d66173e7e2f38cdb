/**
 * The optional one-time answer to "how did you hear of the service" (`POST
 * /v1/self/signup-source`). A person answers at most once: the row is keyed by the human,
 * and a second answer is a conflict that shows the one already recorded, so nothing is
 * ever overwritten.
 */
import { eq } from "drizzle-orm";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { signupSources } from "../db/account-schema";
import { nowIso } from "../auth/tokens";

export type SignupSourceRow = typeof signupSources.$inferSelect;

/** Records the answer; throws `conflict` (with the recorded answer) when one exists. */
export async function recordSignupSource(env: { DB: D1Database }, humanId: string, source: string, detail: string | null): Promise<SignupSourceRow> {
  const row = { humanId, source, detail, createdAt: nowIso() };
  const inserted = await db(env).insert(signupSources).values(row).onConflictDoNothing().returning();
  if (inserted.length === 0) {
    const existing = (await db(env).select().from(signupSources).where(eq(signupSources.humanId, row.humanId)).limit(1))[0];
    throw new RelayError("conflict", "You already answered how you heard of the service.",
      { recorded: { source: existing?.source, detail: existing?.detail ?? null, recorded_at: existing?.createdAt } });
  }
  return row;
}
