/**
 * The daily cap on mail an owner's access changes send to other people, so the relay
 * cannot be used to mail strangers without limit (issue 5). Member invitations, the
 * courtesy notice to an account added as a member, and ownership-transfer offers all
 * draw on one budget per owner (the app's owner, whoever acts for them: agent or
 * session), `INVITE_MAILS_PER_OWNER_DAY` per UTC day, 0 = no cap. The per-IP `invite`
 * limiter on the same routes (RATE_LIMIT_INVITE per window) brakes bursts; this cap
 * bounds the day, across all of the owner's apps and agents.
 *
 * An invitation or offer over the cap is refused with 429 `rate_limited` and Retry-After
 * (seconds to the next UTC day) before anything is stored or mailed. A courtesy notice
 * over the cap is skipped: the membership it announces stands either way.
 */
import { config } from "../config";
import { RelayError } from "../errors";
import { countHit } from "../db/rate-limit";

export const INVITE_MAIL_WINDOW_SECONDS = 86_400;

function bucket(ownerHumanId: string): string {
  return `invite-mail:${ownerHumanId}`;
}

/** Spends one mail of the owner's day; false when the day's budget is already spent. */
async function spend(env: Env, ownerHumanId: string): Promise<{ ok: boolean; limit: number; retryAfter: number }> {
  const limit = config(env).limits.INVITE_MAILS_PER_OWNER_DAY;
  if (limit <= 0) return { ok: true, limit, retryAfter: 0 };
  const { hits, retryAfter } = await countHit(env, bucket(ownerHumanId), INVITE_MAIL_WINDOW_SECONDS);
  return { ok: hits <= limit, limit, retryAfter };
}

/**
 * For a mail the request exists to send (an invitation, a transfer offer): spends one or
 * throws 429 `rate_limited`. Call it after every other check and before storing anything.
 */
export async function spendInviteMail(env: Env, ownerHumanId: string, what: "invitation" | "transfer offer"): Promise<void> {
  const { ok, limit, retryAfter } = await spend(env, ownerHumanId);
  if (ok) return;
  throw new RelayError("rate_limited",
    `This account has sent its ${limit} invitation and transfer mails for today, so this ${what} was not sent; try again in ${retryAfter} s (the cap resets at 00:00 UTC).`,
    { retry_after: retryAfter, limit, per: "owner", window: "day" }, { "Retry-After": String(retryAfter) });
}

/** For a courtesy mail: spends one if the day allows, else answers false (send nothing). */
export async function mayMailNotice(env: Env, ownerHumanId: string): Promise<boolean> {
  return (await spend(env, ownerHumanId)).ok;
}
