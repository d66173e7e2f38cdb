/**
 * Who one fired notify rule reaches (WIRE §5.5 notify `to`), and whether each of them may
 * hear of the row. Targets:
 * - `owner`: the app's owner; `members`: the owner and every member (the app's people,
 *   as `members.list()` shows them);
 * - `author`: the person who made this change; `creator`: the person who created the row;
 * - `role:<name>`: every member holding the role, or a role that includes it;
 * - `field:<relation>`: the person whose id the row's relation field holds;
 * - `submitter`: the address in the rule's `submitterEmailField` (outside mail, behind
 *   NOTIFY_EXTERNAL_ENABLED; an implausible address is dropped without a word).
 * Only people get notifications: an agent, a visitor or a machine named by a target is
 * nobody to tell. Each person must pass the data API's own read check for the row
 * (`authorize(…, "get", …)` with the principal their membership makes them); a person
 * who cannot, or who is no longer the owner or a member, is kept with `principal: null`
 * or `canRead: false` so the engine records the suppression. With `excludeActor` the
 * person who made the change is left out.
 */
import * as z from "zod";
import { inArray } from "drizzle-orm";
import { db } from "../../db/client";
import { humans } from "../../db/schema";
import { listMembers } from "../../db/members";
import { normaliseEmail } from "../../db/humans";
import type { AppRow } from "../../db/apps";
import type { CompiledManifest, NotifyRule } from "../../manifest";
import { authorize, standing, type Author, type Principal, type RowContext } from "../../permissions";
import type { EffectChange } from "../../../durable-objects/app-store/contract";

export interface PersonRecipient {
  humanId: string;
  /** The principal the person's place in the app makes them; null: neither owner nor member. */
  principal: Principal | null;
  /** Whether that principal may read the row (false when there is none). */
  canRead: boolean;
}

export interface Audience {
  people: PersonRecipient[];
  /** The submitter's address (normalised), when the rule names `submitter` and the row holds a plausible one. */
  submitter: string | null;
}

/** The people of an app: the owner, then each member with their custom roles. */
export async function principalsOf(env: Env, app: AppRow): Promise<Map<string, Principal>> {
  const people = new Map<string, Principal>([[app.ownerHumanId, { kind: "owner", humanId: app.ownerHumanId }]]);
  for (const member of await listMembers(env, app.id)) {
    if (member.humanId !== app.ownerHumanId) people.set(member.humanId, { kind: "member", humanId: member.humanId, roles: member.customRoles });
  }
  return people;
}

function fieldOf(data: unknown, field: string): unknown {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[field] : undefined;
}

const plausibleEmail = z.email().max(254);

/** The address a submitter field holds, normalised, or null when it does not look like one. */
export function submitterAddress(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const address = normaliseEmail(value);
  return plausibleEmail.safeParse(address).success ? address : null;
}

/** The ids a target names for this change (people or not: the caller keeps the people). */
function targetIds(target: string, rule: NotifyRule, manifest: CompiledManifest, change: EffectChange, creator: Author | null, people: Map<string, Principal>, ownerId: string): string[] {
  const human = (author: Author | null) => (author?.kind === "human" ? [author.id] : []);
  if (target === "owner") return [ownerId];
  if (target === "members") return [...people.keys()];
  if (target === "author") return human(change.author);
  if (target === "creator") return human(creator);
  if (target.startsWith("role:")) {
    const role = target.slice(5);
    return [...people].filter(([, principal]) => standing(manifest, principal).roles.has(role)).map(([id]) => id);
  }
  if (target.startsWith("field:")) {
    const relation = manifest.collections[rule.collection]?.relations[target.slice(6)];
    const value = relation ? fieldOf(change.data, relation.field) : undefined;
    return typeof value === "string" && value !== "" ? [value] : [];
  }
  return [];
}

/** Ids that are neither owner nor member but name a person (a former member, a stranger): kept, to be recorded as suppressed. */
async function knownHumans(env: Env, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db(env).select({ id: humans.id }).from(humans).where(inArray(humans.id, ids));
  return new Set(rows.map((row) => row.id));
}

/** Whether the principal may read the row, by the very decision the data API's `get` takes. */
export function mayRead(manifest: CompiledManifest, principal: Principal, collection: string, row: RowContext): boolean {
  return authorize(manifest, principal, "get", { collection, row }).ok;
}

/**
 * The audience of one rule for one change. `creator`: who created the row (null when it
 * cannot be known; then `creator` reaches nobody and creator-scoped read lists admit no one).
 */
export async function audienceOf(
  env: Env, app: AppRow, manifest: CompiledManifest, rule: NotifyRule, change: EffectChange, creator: Author | null, externalEnabled: boolean,
): Promise<Audience> {
  const people = await principalsOf(env, app);
  const ids = new Set(rule.to.flatMap((target) => targetIds(target, rule, manifest, change, creator, people, app.ownerHumanId)));
  if (rule.excludeActor && change.author.kind === "human") ids.delete(change.author.id);
  const strangers = await knownHumans(env, [...ids].filter((id) => !people.has(id)));
  const row: RowContext = { key: change.key, creator: creator ?? { kind: "system", id: "" }, editor: change.author, data: change.data };
  const recipients: PersonRecipient[] = [];
  for (const humanId of ids) {
    const principal = people.get(humanId) ?? null;
    if (!principal && !strangers.has(humanId)) continue;
    recipients.push({ humanId, principal, canRead: principal !== null && mayRead(manifest, principal, rule.collection, row) });
  }
  const wantsSubmitter = externalEnabled && rule.to.includes("submitter") && rule.submitterEmailField !== null;
  return { people: recipients, submitter: wantsSubmitter ? submitterAddress(fieldOf(change.data, rule.submitterEmailField!)) : null };
}
