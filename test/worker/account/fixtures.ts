// Shared material for the account tests: an owner with a claimed agent and a deployed
// app (with an `open` collection anyone may read and an owner-only `secret` one), mails
// from the development outbox, the links inside them, and a snapshot of every D1 row an
// account call may change, to prove a refused call changed nothing.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, json, signIn, type SignedIn } from "../helpers";
import { deploy, manifest, owner, type Deployed, type Owner } from "../serve/helpers";

export type Obj = Record<string, unknown>;

export function accountManifest(name = "Shared board"): Obj {
  return manifest({ name }, {
    collections: {
      open: { read: ["anyone"], write: ["owner"], delete: ["owner"] },
      secret: { read: ["owner"], write: ["owner"], delete: ["owner"] },
    },
  });
}

export interface Setup {
  who: Owner;
  app: Deployed;
  /** `/v1/apps/<id>` */
  path: string;
  key: string;
}

export async function setup(visibility = "private", name?: string): Promise<Setup> {
  const who = await owner();
  const app = await deploy(who, { visibility, manifest: accountManifest(name) });
  return { who, app, path: `/v1/apps/${app.app_id}`, key: who.agent.api_key };
}

/** Another app of the same owner. */
export async function anotherApp(s: Setup, visibility = "private"): Promise<Deployed> {
  return deploy(s.who, { visibility, manifest: accountManifest("Second") });
}

export interface Mail {
  subject: string;
  text: string;
  html: string;
}

export async function mailsTo(email: string): Promise<Mail[]> {
  const body = await json<{ messages: Mail[] }>(await call(`/__dev/mail?to=${encodeURIComponent(email)}`), 200);
  return body.messages;
}

export async function mailCount(email: string): Promise<number> {
  return (await mailsTo(email)).length;
}

/** The token of the newest link of `kind` (`transfer` → trf_, `account/delete` → del_) mailed to `email`. */
export async function mailedToken(email: string, path: "transfer" | "account/delete"): Promise<string> {
  const mails = await mailsTo(email);
  expect(mails.length).toBeGreaterThan(0);
  const prefix = path === "transfer" ? "trf_" : "del_";
  const match = new RegExp(`http://localhost:8787/${path}\\?token=(${prefix}[0-9a-f]{32})`).exec(mails[0].text);
  expect(match, mails[0].text).not.toBeNull();
  return match![1];
}

/** Every row an account call may touch for this app and these people. */
export async function state(appId: string, ...people: string[]): Promise<Obj> {
  const all = async (sql: string, ...binds: unknown[]) => (await env.DB.prepare(sql).bind(...binds).all()).results;
  return {
    app: await all("SELECT owner_human_id, status, deleted_at, last_activity_at FROM apps WHERE id = ?1", appId),
    transfers: await all("SELECT id, status, to_email, keep_as_member, expires_at, resolved_at, accepted_by_human_id FROM app_transfers WHERE app_id = ?1 ORDER BY id", appId),
    members: await all("SELECT human_id, custom_roles, created_at FROM app_members WHERE app_id = ?1 ORDER BY human_id", appId),
    grants: await all("SELECT grant_hash, used_at FROM app_session_grants WHERE app_id = ?1 ORDER BY grant_hash", appId),
    previews: await all("SELECT id, revoked_at, expires_at FROM preview_tokens WHERE app_id = ?1 ORDER BY id", appId),
    favorites: await all("SELECT human_id FROM app_favorites WHERE app_id = ?1 ORDER BY human_id", appId),
    views: await all("SELECT human_id, view_count FROM app_views WHERE app_id = ?1 ORDER BY human_id", appId),
    mails: await Promise.all(people.map((p) => mailCount(p))),
  };
}

export interface TransferBody {
  id: string;
  app_id: string;
  status: string;
  to_email: string;
  keep_as_member: boolean;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
}

/** Offers the app to `email` as the owner's agent; returns the offer and the mailed token. */
export async function offer(s: Setup, email: string, keepAsMember?: boolean): Promise<{ transfer: TransferBody; token: string }> {
  const res = await call(`${s.path}/transfer`, { key: s.key, json: { email, ...(keepAsMember === undefined ? {} : { keep_as_member: keepAsMember }) } });
  const { transfer } = await json<{ transfer: TransferBody }>(res, 201);
  return { transfer, token: await mailedToken(email, "transfer") };
}

export function accept(human: SignedIn, token: string): Promise<Response> {
  return call("/v1/self/transfers/accept", { session: human.session, json: { token } });
}

/** A signed-in person who is a member of the app (added by the owner's agent). */
export async function member(s: Setup): Promise<SignedIn> {
  const human = await signIn();
  await json(await call(`${s.path}/members`, { key: s.key, json: { email: human.email } }), 201);
  return human;
}

export function form(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}
