// Shared material for the notification tests: an app deployed with notify rules by an
// owner's claimed agent, people added as members (with custom roles), their app sessions,
// the notification mails the development outbox captured for an address (the sign-in
// links and member notices the setup itself causes left out), and the engine's own record
// of what it did for a row.
import { env } from "cloudflare:test";
import { call, json, signIn, type SignedIn } from "../helpers";
import { appCall, deploy, owner, ownerToken, type Deployed, type Owner } from "../serve/helpers";

export type Obj = Record<string, unknown>;

/** A manifest with custom roles `writer` and `chief` (chief includes writer) and the given collections and notify rules. */
export function notifyManifest(collections: Obj, notify: Obj[], extra: Obj = {}): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": {
      app: { name: "Notes & Co" },
      roles: { writer: { label: "Writer" }, chief: { label: "Chief", includes: ["writer"] } },
      collections,
      notify,
      ...extra,
    },
  };
}

export interface NotifyApp {
  who: Owner;
  app: Deployed;
  key: string;
  /** `/v1/apps/<id>/collections/<name>` */
  rows: (collection: string) => string;
}

export async function deployNotify(manifest: Obj, visibility = "private"): Promise<NotifyApp> {
  const who = await owner();
  const app = await deploy(who, { manifest, visibility });
  return { who, app, key: who.agent.api_key, rows: (collection) => `/v1/apps/${app.app_id}/collections/${collection}` };
}

/** Signs a new person in and adds them as a member with these custom roles. */
export async function addMember(t: NotifyApp, roles: string[] = []): Promise<SignedIn> {
  const person = await signIn();
  await json(await call(`/v1/apps/${t.app.app_id}/members`, { key: t.key, json: { email: person.email, custom_roles: roles } }), 201);
  return person;
}

/** An app session for a person of the app (owner or member), through /authorize. */
export function sessionOf(t: NotifyApp, person: SignedIn): Promise<string> {
  return ownerToken(person, t.app.slug);
}

/** Creates a row as the owner's agent; answers its key. */
export async function create(t: NotifyApp, collection: string, data: Obj): Promise<string> {
  return (await json<{ row: { key: string } }>(await call(t.rows(collection), { key: t.key, json: { data } }), 201)).row.key;
}

/** Creates a row through the page door with a person's app session; answers its key. */
export async function createAs(t: NotifyApp, token: string, collection: string, data: Obj): Promise<string> {
  return (await json<{ row: { key: string } }>(await appCall(t.app.slug, `/_svc/c/${collection}`, { token, json: { data } }), 201)).row.key;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** The notification mails captured for `address`, oldest first. */
export async function mailsTo(address: string): Promise<Mail[]> {
  const rows = await env.DB.prepare(
    `SELECT "to", subject, text, html FROM dev_mail WHERE "to" = ?1 AND subject NOT LIKE 'Your sign-in link%' AND subject NOT LIKE 'You now have access%' ORDER BY created_at, id`,
  ).bind(address.toLowerCase()).all<Mail>();
  return rows.results;
}

export interface Recorded {
  recipient: string;
  channel: string;
  status: string;
  reason: string | null;
}

/** What the engine recorded for one row of an app, ordered for comparison. */
export async function recordedFor(appId: string, rowKey: string): Promise<Recorded[]> {
  const rows = await env.DB.prepare(
    "SELECT recipient, channel, status, reason FROM notifications WHERE app_id = ?1 AND row_key = ?2 ORDER BY recipient, channel",
  ).bind(appId, rowKey).all<Recorded>();
  return rows.results;
}

/** The recipient key the engine files a person under. */
export function personKey(person: { humanId: string }): string {
  return `human:${person.humanId}`;
}
