// Shared material for the members tests: a manifest that declares custom roles (one that
// includes another, and enough of them to try the eight-role cap), an owner with a claimed
// agent and a deployed app, and a snapshot of every row a failed members call must leave
// untouched (memberships, invitations, mails, sign-in grants).
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, freshEmail, json, signIn, type SignedIn } from "../helpers";
import { deploy, owner, type Deployed, type Owner } from "../serve/helpers";

export type Obj = Record<string, unknown>;

export const EXTRA_ROLES = ["r1", "r2", "r3", "r4", "r5", "r6", "r7"];

/**
 * Roles: writer, viewer, and reviewer (includes viewer), plus r1..r7 (ten in all).
 * Collections: `notes` (members read, writers create, writers update their own rows,
 * only the owner deletes) and `log` (append-only, viewers read, members write).
 */
export function rolesManifest(): Obj {
  const extra = Object.fromEntries(EXTRA_ROLES.map((r) => [r, { label: r.toUpperCase() }]));
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 200 } }, required: ["text"] } },
    "x-service-manifest": {
      app: { name: "Team board" },
      roles: {
        writer: { label: "Writer", description: "Adds notes and edits their own" },
        viewer: { label: "Viewer" },
        reviewer: { label: "Reviewer", description: "Reads the log", includes: ["viewer"] },
        ...extra,
      },
      collections: {
        notes: { schema: { $ref: "#/$defs/Note" }, read: ["member"], write: ["writer"], update: ["writer:own"], delete: ["owner"] },
        log: { read: ["viewer"], write: ["member"], delete: ["owner"], appendOnly: true },
      },
    },
  };
}

export interface Team {
  who: Owner;
  app: Deployed;
  /** `/v1/apps/<id>` */
  path: string;
  key: string;
}

export async function team(visibility = "private", manifest: Obj = rolesManifest()): Promise<Team> {
  const who = await owner();
  const app = await deploy(who, { visibility, manifest });
  return { who, app, path: `/v1/apps/${app.app_id}`, key: who.agent.api_key };
}

export interface MemberBody {
  humanId: string;
  email: string;
  role: string;
  customRoles?: string[];
  customRole?: string | null;
  createdAt: string;
}

/** Adds an existing account by email as the agent; returns the member record. */
export async function addMember(t: Team, human: SignedIn, roles?: string[]): Promise<MemberBody> {
  const res = await call(`${t.path}/members`, { key: t.key, json: { email: human.email, ...(roles ? { custom_roles: roles } : {}) } });
  return (await json<{ member: MemberBody }>(res, 201)).member;
}

/** A signed-in human who is a member of the team's app. */
export async function member(t: Team, roles?: string[]): Promise<SignedIn> {
  const human = await signIn();
  await addMember(t, human, roles);
  return human;
}

export async function listMembers(t: Team): Promise<MemberBody[]> {
  return (await json<{ members: MemberBody[] }>(await call(`${t.path}/members`, { key: t.key }), 200)).members;
}

/** Everything a members call may change, for one app and one address. */
export async function state(appId: string, email?: string): Promise<Obj> {
  const members = await env.DB.prepare("SELECT human_id, custom_roles, created_at, updated_at FROM app_members WHERE app_id = ?1 ORDER BY human_id").bind(appId).all();
  const invites = await env.DB.prepare("SELECT email, token_hash, custom_roles, expires_at, used_at, accepted_human_id FROM app_invites WHERE app_id = ?1 ORDER BY email").bind(appId).all();
  const grants = await env.DB.prepare("SELECT grant_hash, used_at FROM app_session_grants WHERE app_id = ?1 ORDER BY grant_hash").bind(appId).all();
  const mails = email ? await env.DB.prepare("SELECT count(*) AS n FROM dev_mail WHERE \"to\" = ?1").bind(email.toLowerCase()).first<{ n: number }>("n") : null;
  const humans = await env.DB.prepare("SELECT count(*) AS n FROM humans").first<number>("n");
  return { members: members.results, invites: invites.results, grants: grants.results, mails, humans };
}

/** The newest mail to `email` (development outbox). */
export async function latestMail(email: string): Promise<{ subject: string; text: string; html: string }> {
  const res = await call(`/__dev/mail?to=${encodeURIComponent(email)}`);
  const body = await json<{ messages: Array<{ subject: string; text: string; html: string }> }>(res, 200);
  expect(body.messages.length).toBeGreaterThan(0);
  return body.messages[0];
}

/** The invitation link in the newest mail to `email`. */
export async function inviteLink(email: string): Promise<{ url: string; token: string }> {
  const mail = await latestMail(email);
  const match = /(http:\/\/localhost:8787\/invite\?token=(inv_[0-9a-f]{32}))/.exec(mail.text);
  expect(match, mail.text).not.toBeNull();
  return { url: match![1], token: match![2] };
}

/** Invites an address nobody has an account for; returns it with the mailed token. */
export async function invite(t: Team, roles?: string[]): Promise<{ email: string; token: string; expires_at: string }> {
  const email = freshEmail("invitee");
  const res = await call(`${t.path}/members`, { key: t.key, json: { email, ...(roles ? { custom_roles: roles } : {}) } });
  const body = await json<{ ok: true; invited: string; expires_at: string }>(res, 200);
  const { token } = await inviteLink(email);
  return { email, token, expires_at: body.expires_at };
}
