/**
 * The last step of an app made hidden (owned by a placeholder: an archive import filling
 * it, a create seeding its starter rows; src/db/apps.ts): giving it, whole, to its person.
 * Shared by both, so they refuse alike: a person whose account filled up meanwhile gets
 * `account_quota_exceeded`, one whose account was deleted meanwhile `unauthorized`, and a
 * maker a sweep already undid (it outlasted its window) gets `internal_error` with what to
 * send again. The caller purges the app on any of them.
 */
import { RelayError } from "../errors";
import { handOverApp, ownsApp } from "../db/apps";
import { getHuman } from "../db/humans";

export function appCapReached(cap: number): RelayError {
  return new RelayError("account_quota_exceeded", `This account has ${cap} apps, the most it may have.`, { limit: cap, resource: "apps" });
}

/**
 * Why an app could not go to `humanId` (its create, hand-over or restore changed nothing):
 * their account was deleted while the request ran, or else `full`, the cap's refusal.
 */
export async function refusalFor(env: Env, humanId: string, full: RelayError): Promise<RelayError> {
  if (await getHuman(env, humanId)) return full;
  return new RelayError("unauthorized", "The account this request acts for was deleted while it ran; nothing was made or changed.");
}

/** The whole app goes from its placeholder to its person, only if the person still has room; `undone` is what to tell a maker the sweep undid. */
export async function handOverOrRefuse(env: Env, appId: string, placeholder: string, humanId: string, cap: number, undone: string): Promise<void> {
  let moved: boolean;
  try {
    moved = await handOverApp(env, appId, placeholder, humanId, cap);
  } catch (err) {
    // The move may have landed with its answer lost: then the app is the person's and the work is done.
    if (await ownsApp(env, humanId, appId).catch(() => false)) return;
    throw err;
  }
  if (moved) return;
  if (await ownsApp(env, placeholder, appId)) throw await refusalFor(env, humanId, appCapReached(cap));
  throw new RelayError("internal_error", undone);
}
