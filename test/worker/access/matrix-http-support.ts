// The machinery behind matrix-http.test.ts, which repeats the unit permission matrix
// (test/unit/permissions) through the real routes: members and grant-link holders on the
// app origin's `/_svc/*` data paths, service credentials on `/v1/apps/:id/collections`.
// One app per subject holds one collection per scenario of oracle.ts; the rows are placed
// under a permissive first version (each principal writing its own rows for real), then a
// second version deploys the scenario lists, and every cell is one request.
//
// Requests go through `dispatch` (the Worker's fetch entry, not SELF.fetch; see helpers.ts).
import { catalogue, type ErrorCode } from "../../../src/errors";
import { buildRequest, dispatch, type CallOptions, type Registered, type SignedIn } from "../helpers";
import { appRequest, type AppCallOptions } from "../serve/helpers";
import { PRINCIPALS, ROLES, TASK_DEFS, VARIANTS, type PrincipalName, type Variant } from "../../unit/permissions/fixtures";
import { scenario, type Verb } from "../../unit/permissions/oracle";

export type Obj = Record<string, unknown>;
export interface Stamp {
  kind: string;
  id: string;
}

// ---- requests ----

export const api = (path: string, opts: CallOptions = {}): Promise<Response> => dispatch(buildRequest(path, opts));
export const page = (slug: string, path: string, opts: AppCallOptions = {}): Promise<Response> => dispatch(appRequest(slug, path, opts));

/** The body of an answer that must have `status`; anything else throws with the answer. */
export async function expectJson<T = Obj>(res: Response | Promise<Response>, status: number, what: string): Promise<T> {
  const r = await res;
  const text = await r.text();
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** Runs `work` over `items`, at most `width` at a time. */
export async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

/**
 * An answer reduced to the oracle's vocabulary: "ok" when the status is the verb's
 * success status, the catalogue code when the envelope carries one with its catalogue
 * status, otherwise a description of what came back.
 */
export async function reduce(res: Response, okStatus: number): Promise<{ got: string; body: Obj | null }> {
  const text = await res.text();
  let body: Obj | null = null;
  try {
    body = JSON.parse(text) as Obj;
  } catch {
    // not JSON: described below
  }
  if (res.status === okStatus && body) return { got: "ok", body };
  const error = body?.error as { code?: string } | undefined;
  const code = error?.code;
  if (code && Object.hasOwn(catalogue, code) && catalogue[code as ErrorCode].status === res.status) return { got: code, body };
  return { got: `HTTP ${res.status} ${text.slice(0, 160)}`, body };
}

// ---- the apps ----

/** Each collection of a subject's app and the verbs judged in it (list and get share one, as the oracle's scenarios do). */
export const TABLE_OF: Record<Verb, string> = {
  list: "reads", get: "reads", count: "counts", create: "creates", update: "updates", updateHidden: "updates-hidden",
  delete: "deletes", deleteHidden: "deletes-hidden", purge: "purges", restore: "restores", listDeleted: "restores",
};
/** The collections holding placed rows before the cells run. */
export const ROW_TABLES = ["reads", "updates", "updates-hidden", "deletes", "deletes-hidden", "purges", "restores"];
/** Tables only credentials are judged in (the trash verbs have no route on the app origin). */
export const CREDENTIAL_ONLY_TABLES = ["purges", "restores"];

const ownerOnly = { read: ["owner"], write: ["owner"], delete: ["owner"] };
const TASK = { schema: { $ref: "#/$defs/Task" }, relations: { assignee: { field: "assignee_id", set: "caller" } } };

function manifestWith(collections: Record<string, Obj>): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: TASK_DEFS,
    "x-service-manifest": { app: { name: "Permission matrix" }, roles: ROLES, collections: { ...collections, other: ownerOnly } },
  };
}

/** The tables a subject's app has: a scenario the manifest refuses has none. */
export function tablesFor(subject: string): string[] {
  const out = new Set<string>();
  for (const [verb, table] of Object.entries(TABLE_OF) as Array<[Verb, string]>) if (scenario(verb, subject)) out.add(table);
  return [...out];
}

/** The scenario version: each table exactly as the unit fixtures' `compile` builds collection `tasks`. */
export function scenarioManifest(subject: string): Obj {
  const collections: Record<string, Obj> = {};
  for (const [verb, table] of Object.entries(TABLE_OF) as Array<[Verb, string]>) {
    const s = scenario(verb, subject);
    if (s) collections[table] = { ...TASK, ...ownerOnly, ...s };
  }
  return manifestWith(collections);
}

/** The first version: every table open to everybody, so each principal can place its own rows. */
export function openManifest(subject: string): Obj {
  const open = { read: ["anyone"], write: ["anyone"], update: ["anyone"], delete: ["anyone"], countRead: ["anyone"] };
  return manifestWith(Object.fromEntries(tablesFor(subject).map((t) => [t, { ...TASK, ...open }])));
}

/** A manifest holding just one refused scenario, to show the relay's deploy refuses it as the unit matrix says. */
export function refusedManifest(verb: Verb, subject: string): Obj {
  const lists = verb === "count" ? { countRead: [subject] } : { read: ["anyone"], write: [subject], update: ["owner"] };
  return manifestWith({ tasks: { ...TASK, ...ownerOnly, ...lists } });
}

// ---- principals ----

export const MEMBERS = ["member", "memberStaff", "memberLead"] as const;
export const GRANTS = ["grantStaff", "grantLead", "grantPinKeyIn", "grantPinKeyOut", "grantPinWhereIn", "grantPinWhereOut"] as const;
export const CREDENTIALS = ["credAll", "credRead", "credNoOps", "credOther", "credOwn", "credFollowing", "credFollowingCarve"] as const;
export const HTTP_PRINCIPALS: PrincipalName[] = [...MEMBERS, ...GRANTS, ...CREDENTIALS];
export type Kind = "member" | "grant" | "credential";
export const kindOf = (name: PrincipalName): Kind =>
  (MEMBERS as readonly string[]).includes(name) ? "member" : (GRANTS as readonly string[]).includes(name) ? "grant" : "credential";

/** One authenticated caller: how it calls, and the stamp its writes carry. */
export interface Actor {
  name: PrincipalName;
  kind: Kind;
  token: string;
  stamp: Stamp;
}

/** The shared cast: the owner with its agent, and three signed-in humans who become members of every app. */
export interface Cast {
  owner: SignedIn;
  agent: Registered;
  humans: Record<(typeof MEMBERS)[number], SignedIn>;
}

export interface SubjectApp {
  subject: string;
  appId: string;
  slug: string;
  agent: Registered;
  /** Per principal and placement: the same actor for every placement, except `grantPinKeyIn` (one link per pinned row). */
  actors: Record<string, Record<Variant, Actor>>;
}

const same = (actor: Actor): Record<Variant, Actor> => Object.fromEntries(VARIANTS.map((v) => [v, actor])) as Record<Variant, Actor>;

/** The row key of a principal's row in a placement (also the key a create cell writes). */
export const rowKey = (name: PrincipalName, v: Variant): string => `${name}-${v}`;

async function deploy(agent: Registered, subject: string): Promise<{ app_id: string; slug: string }> {
  return expectJson(api("/v1/apps", { key: agent.api_key, json: { html: "<p>matrix</p>", manifest: openManifest(subject), visibility: "private" } }), 201, `deploy ${subject}`);
}

/** A member's app session, through the real /authorize hand-off and POST /_svc/session. */
async function memberToken(human: SignedIn, slug: string): Promise<string> {
  const back = `http://${slug}.localhost:8787/`;
  const res = await api(`/authorize?app=${slug}&return=${encodeURIComponent(back)}`, { session: human.session });
  const location = res.headers.get("location") ?? "";
  await res.arrayBuffer();
  const grant = /#svc_grant=(sgr_[0-9a-f]{32})$/.exec(location)?.[1];
  if (res.status !== 302 || !grant) throw new Error(`authorize: ${res.status} ${location}`);
  return (await expectJson<{ token: string }>(page(slug, "/_svc/session", { json: { grant } }), 200, "app session")).token;
}

/** Mints a grant link and exchanges it on the app origin, as a page does with `#g=`. */
async function holder(app: { appId: string; slug: string; agent: Registered }, name: PrincipalName, pin: Obj | null): Promise<Actor> {
  const p = PRINCIPALS[name] as { role: string };
  const link = await expectJson<{ grant_url: string }>(
    api(`/v1/apps/${app.appId}/grants`, { key: app.agent.api_key, json: { role: p.role, ...(pin ? { pin } : {}) } }), 201, `grant link ${name}`);
  const grant = /#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1];
  const held = await expectJson<{ token: string; holder_id: string }>(page(app.slug, "/_svc/grant", { json: { grant } }), 200, `exchange ${name}`);
  return { name, kind: "grant", token: held.token, stamp: { kind: "grant", id: held.holder_id } };
}

/** A service credential with the fixture's mode and allowlist, its `tasks` entry repeated for every table. */
async function credential(app: { appId: string; agent: Registered }, name: PrincipalName, tables: string[]): Promise<Actor> {
  const p = PRINCIPALS[name] as { mode: string; grants: Array<Obj & { collection: string }> };
  const grants = p.grants.flatMap((g) => (g.collection === "tasks" ? tables.map((t) => ({ ...g, collection: t })) : [g]));
  const minted = await expectJson<{ id: string; token: string }>(
    api(`/v1/apps/${app.appId}/credentials`, { key: app.agent.api_key, json: { mode: p.mode, grants } }), 201, `credential ${name}`);
  return { name, kind: "credential", token: minted.token, stamp: { kind: "service", id: minted.id } };
}

/** Deploys the subject's open version and gives it every principal of the matrix. */
export async function openApp(cast: Cast, subject: string): Promise<SubjectApp> {
  const deployed = await deploy(cast.agent, subject);
  const app = { subject, appId: deployed.app_id, slug: deployed.slug, agent: cast.agent, actors: {} as SubjectApp["actors"] };
  const tables = tablesFor(subject);
  const jobs: Array<() => Promise<void>> = [];
  for (const name of MEMBERS) {
    jobs.push(async () => {
      const roles = (PRINCIPALS[name] as { roles: string[] }).roles;
      await expectJson(api(`/v1/apps/${app.appId}/members`, {
        key: cast.agent.api_key, json: { email: cast.humans[name].email, ...(roles.length ? { custom_roles: roles } : {}) },
      }), 201, `member ${name}`);
      const token = await memberToken(cast.humans[name], app.slug);
      app.actors[name] = same({ name, kind: "member", token, stamp: { kind: "human", id: cast.humans[name].humanId } });
    });
  }
  const pinned = (name: PrincipalName) => (PRINCIPALS[name] as { pin: Obj | null }).pin;
  for (const name of ["grantStaff", "grantLead", "grantPinWhereIn", "grantPinWhereOut"] as const) {
    jobs.push(async () => {
      app.actors[name] = same(await holder(app, name, pinned(name)));
    });
  }
  // A key pin names one row, so the "pin in" holder gets one link per placement, each
  // pinned to the row placed for it; "pin out" is pinned to a key no row has.
  jobs.push(async () => {
    app.actors.grantPinKeyOut = same(await holder(app, "grantPinKeyOut", { row_key: "elsewhere" }));
  });
  jobs.push(async () => {
    const byVariant = await Promise.all(VARIANTS.map((v) => holder(app, "grantPinKeyIn", { row_key: rowKey("grantPinKeyIn", v) })));
    app.actors.grantPinKeyIn = Object.fromEntries(VARIANTS.map((v, i) => [v, byVariant[i]])) as Record<Variant, Actor>;
  });
  for (const name of CREDENTIALS) {
    jobs.push(async () => {
      app.actors[name] = same(await credential(app, name, tables));
    });
  }
  await pool(jobs, 8, (job) => job());
  return app;
}

// ---- calls as an actor ----

/** A row route of `table` as the actor: the app origin's `/_svc/c` for members and holders, `/v1` for credentials. */
export function asActor(app: SubjectApp, actor: Actor, table: string, rest: string, opts: { method?: string; json?: unknown } = {}): Promise<Response> {
  if (actor.kind === "credential") return api(`/v1/apps/${app.appId}/collections/${table}${rest}`, { key: actor.token, ...opts });
  return page(app.slug, `/_svc/c/${table}${rest}`, { token: actor.token, ...opts });
}

export function asAgent(app: SubjectApp, table: string, rest: string, opts: { method?: string; json?: unknown } = {}): Promise<Response> {
  return api(`/v1/apps/${app.appId}/collections/${table}${rest}`, { key: app.agent.api_key, ...opts });
}

// ---- placing rows ----

/** The fixture row's data (`rowFor`): title, status open, assignee the principal or somebody else. */
export function rowData(assignee: string, status = "open"): Obj {
  return { title: "t", status, assignee_id: assignee };
}

/**
 * Placements no request can produce, so their cells are skipped:
 * - a credential whose allowlist has no create/update on the table (read only, no ops,
 *   another collection, following with a read-only carve-out) can never be a row's
 *   creator or editor: "mine", "created" and "edited" do not exist for it;
 * - `scope: own` lets a credential update only rows it wrote last, so it can never
 *   become the editor of someone else's row ("edited");
 * - a holder pinned to another key can write only that key, so no row outside its pin
 *   was ever written by it ("mine", "created", "edited");
 * - a holder pinned to `status = closed` may write only closed rows, and the placed row is
 *   open: it can create a closed row the agent then reopens ("created"), but it can never
 *   be the last writer of an open row ("mine", "edited").
 * "assigned" and "foreign" are always possible: the agent writes those rows, naming the
 * principal's identity (holder id, credential id, human id) in the relation field.
 */
export const UNPRODUCIBLE: Partial<Record<PrincipalName, Variant[]>> = {
  credRead: ["mine", "created", "edited"],
  credNoOps: ["mine", "created", "edited"],
  credOther: ["mine", "created", "edited"],
  credFollowingCarve: ["mine", "created", "edited"],
  credOwn: ["edited"],
  grantPinKeyOut: ["mine", "created", "edited"],
  grantPinWhereOut: ["mine", "edited"],
};

export const producible = (name: PrincipalName, v: Variant): boolean => !(UNPRODUCIBLE[name] ?? []).includes(v);

/** The principals whose rows a table holds. */
export const placedIn = (table: string): PrincipalName[] => (CREDENTIAL_ONLY_TABLES.includes(table) ? [...CREDENTIALS] : HTTP_PRINCIPALS);

/**
 * Places every principal's rows in every row table, for real: the principal creates what
 * it created and updates what it edited last; the agent writes the rest. The "restores"
 * rows are then soft-deleted by the agent.
 */
export async function placeRows(app: SubjectApp, width: number): Promise<void> {
  const stranger = app.agent.agent_id;
  const tables = tablesFor(app.subject).filter((t) => ROW_TABLES.includes(t));
  const byAgent: Record<string, Array<{ key: string; data: Obj }>> = {};
  const firstWrites: Array<() => Promise<unknown>> = [];
  const secondWrites: Array<() => Promise<unknown>> = [];
  for (const table of tables) {
    byAgent[table] = [];
    for (const name of placedIn(table)) {
      for (const v of VARIANTS) {
        if (!producible(name, v)) continue;
        const actor = app.actors[name][v];
        const key = rowKey(name, v);
        const mine = v === "mine" || v === "assigned";
        const data = rowData(mine ? actor.stamp.id : stranger);
        const what = `${app.subject} ${table} ${key}`;
        if (v === "mine") {
          firstWrites.push(() => expectJson(asActor(app, actor, table, "", { json: { key, data } }), 201, `place ${what}`));
        } else if (v === "created") {
          // Created by the principal (a pin-out holder may only write a closed row), last written by the agent.
          const first = name === "grantPinWhereOut" ? rowData(stranger, "closed") : data;
          firstWrites.push(() => expectJson(asActor(app, actor, table, "", { json: { key, data: first } }), 201, `place ${what}`));
          secondWrites.push(() => expectJson(asAgent(app, table, `/${key}`, { method: "PATCH", json: { data } }), 200, `place ${what}`));
        } else if (v === "edited") {
          byAgent[table].push({ key, data });
          secondWrites.push(() => expectJson(asActor(app, actor, table, `/${key}`, { method: "PATCH", json: { data } }), 200, `place ${what}`));
        } else {
          byAgent[table].push({ key, data });
        }
      }
    }
  }
  for (const [table, rows] of Object.entries(byAgent)) {
    for (let i = 0; i < rows.length; i += 100) {
      const chunk = rows.slice(i, i + 100);
      firstWrites.push(async () => {
        const batch = await expectJson<{ ok_count: number; results: unknown[] }>(asAgent(app, table, "/batch", { json: { rows: chunk } }), 200, `batch ${table}`);
        if (batch.ok_count !== chunk.length) throw new Error(`batch ${table}: ${JSON.stringify(batch.results)}`);
      });
    }
  }
  await pool(firstWrites, width, (w) => w().then(() => undefined));
  await pool(secondWrites, width, (w) => w().then(() => undefined));
  if (tables.includes("restores")) {
    const keys = byAgent.restores.map((r) => r.key).concat(
      CREDENTIALS.flatMap((n) => (["mine", "created"] as Variant[]).filter((v) => producible(n, v)).map((v) => rowKey(n, v))));
    const gone = await expectJson<{ ok_count: number }>(asAgent(app, "restores", "/batch", { method: "DELETE", json: { keys } }), 200, "trash restores");
    if (gone.ok_count !== keys.length) throw new Error(`soft-deleted ${gone.ok_count} of ${keys.length} rows`);
  }
}

/** Deploys the scenario lists as the app's next version. */
export async function deployScenario(app: SubjectApp): Promise<void> {
  const res = await expectJson<{ compat: string }>(
    api(`/v1/apps/${app.appId}/versions`, { key: app.agent.api_key, json: { manifest: scenarioManifest(app.subject) } }), 200, `redeploy ${app.subject}`);
  if (res.compat !== "clean") throw new Error(`redeploy ${app.subject}: compat ${res.compat}`);
}

// ---- one cell ----

const OK_STATUS: Partial<Record<Verb, number>> = { create: 201 };

/** The request a cell makes. */
function cellRequest(app: SubjectApp, actor: Actor, verb: Verb, table: string, key: string, data: Obj): Promise<Response> {
  switch (verb) {
    case "list":
      return asActor(app, actor, table, "?limit=1000");
    case "get":
      return asActor(app, actor, table, `/${key}`);
    case "count":
      return actor.kind === "credential" ? asActor(app, actor, table, "/count") : page(app.slug, `/_svc/count/${table}`, { token: actor.token });
    case "create":
      return asActor(app, actor, table, "", { json: { key, data } });
    case "update":
    case "updateHidden":
      return asActor(app, actor, table, `/${key}`, { method: "PATCH", json: { data } });
    case "delete":
    case "deleteHidden":
      return asActor(app, actor, table, `/${key}`, { method: "DELETE" });
    case "purge":
      return asActor(app, actor, table, `/${key}/purge`, { method: "DELETE" });
    case "restore":
      return asActor(app, actor, table, `/${key}/restore`, { method: "POST" });
    case "listDeleted":
      return asActor(app, actor, table, "/deleted");
  }
}

const sameStamp = (a: unknown, b: Stamp) => !!a && (a as Stamp).kind === b.kind && (a as Stamp).id === b.id;

/**
 * Runs one cell and reduces the answer to the oracle's vocabulary: "ok" (a write must
 * also carry the actor's stamp), "ok:seen" / "ok:unseen" for a list, or the error code.
 */
export async function runCell(app: SubjectApp, verb: Verb, name: PrincipalName, v: Variant): Promise<string> {
  const actor = app.actors[name][v];
  const key = rowKey(name, v);
  const data = rowData(v === "mine" || v === "assigned" ? actor.stamp.id : app.agent.agent_id);
  const res = await cellRequest(app, actor, verb, TABLE_OF[verb], key, data);
  const { got, body } = await reduce(res, OK_STATUS[verb] ?? 200);
  if (got !== "ok") return got;
  const row = (body as { row?: Obj }).row;
  switch (verb) {
    case "list": {
      const rows = (body as { rows: Array<{ key: string }>; has_more: boolean }).rows;
      if ((body as { has_more: boolean }).has_more) return "ok, but the page was cut";
      return rows.some((r) => r.key === key) ? "ok:seen" : "ok:unseen";
    }
    case "create":
      return sameStamp(row?.creator, actor.stamp) ? "ok" : `ok, stamped ${JSON.stringify(row?.creator)}`;
    case "update":
    case "updateHidden":
      return sameStamp(row?.editor, actor.stamp) ? "ok" : `ok, stamped ${JSON.stringify(row?.editor)}`;
    default:
      return "ok";
  }
}
