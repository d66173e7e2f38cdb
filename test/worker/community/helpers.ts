// Shared material for the community publishing and review tests: a publisher (a signed-in
// human and their claimed agent) with a todo app holding example rows, an operator (a
// human whose email the relay's COMMUNITY_REVIEW_OPERATOR_EMAILS lists for that call),
// and calls made as either. Every test makes its own people and apps.
import { call, callWith, claimedAgent, freshEmail, json, signIn, type CallOptions, type SignedIn } from "../helpers";

export type Obj = Record<string, unknown>;

export interface Person {
  human: SignedIn;
  key: string;
}

export async function person(label = "publisher"): Promise<Person> {
  const human = await signIn(freshEmail(label));
  return { human, key: (await claimedAgent(human)).api_key };
}

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };

/**
 * A todo app: `todos` (seedOnInstall), `drafts` (not), `settings` (the settings
 * collection, seedOnInstall too, so a test can see it is still never copied). `ext` merges
 * into x-service-manifest.
 */
export function todoManifest(ext: Obj = {}): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: {
      Todo: { type: "object", properties: { title: { type: "string", maxLength: 200 }, done: { type: "boolean" } }, required: ["title"], additionalProperties: false },
    },
    "x-service-manifest": {
      app: { name: "Todo" },
      collections: {
        todos: { schema: { $ref: "#/$defs/Todo" }, ...owned, seedOnInstall: true },
        drafts: { ...owned },
        settings: { ...owned, seedOnInstall: true },
      },
      settingsCollection: "settings",
      ...ext,
    },
  };
}

export const todoPage = "<!doctype html><html><body><h1>Todo</h1><ul id=list></ul></body></html>";

export async function deployApp(owner: Person, manifest: Obj = todoManifest(), html = todoPage): Promise<string> {
  const res = await call("/v1/apps", { key: owner.key, json: { html, manifest, visibility: "private" } });
  return (await json<{ app_id: string }>(res, 201)).app_id;
}

export async function writeRow(owner: Person, appId: string, collection: string, data: unknown, key?: string): Promise<void> {
  await json(await call(`/v1/apps/${appId}/collections/${collection}`, { key: owner.key, json: { data, ...(key ? { key } : {}) } }), 201);
}

/** A publisher with a todo app holding two example todos, a draft and a secret setting. */
export async function todoPublisher(): Promise<{ owner: Person; appId: string }> {
  const owner = await person();
  const appId = await deployApp(owner);
  await writeRow(owner, appId, "todos", { title: "Buy milk" }, "t1");
  await writeRow(owner, appId, "todos", { title: "Water plants", done: true }, "t2");
  await writeRow(owner, appId, "drafts", { text: "private draft" }, "d1");
  await writeRow(owner, appId, "settings", { apiToken: "very-secret" }, "install-config");
  return { owner, appId };
}

export function publish(owner: Person, body: Obj): Promise<Response> {
  return call("/v1/community/publish", { key: owner.key, json: body });
}

/** Calls as someone with the relay configured to treat `operator` as a community operator. */
export function asOperator(operator: Person, path: string, opts: CallOptions = {}): Promise<Response> {
  return callWith({ COMMUNITY_REVIEW_OPERATOR_EMAILS: `someone-else@example.com, ${operator.human.email.toUpperCase()}` }, path, { key: operator.key, ...opts });
}

/** The same relay configuration, calling with another person's key (who is no operator). */
export function withOperatorsSet(operator: Person, caller: Person, path: string, opts: CallOptions = {}): Promise<Response> {
  return callWith({ COMMUNITY_REVIEW_OPERATOR_EMAILS: operator.human.email }, path, { key: caller.key, ...opts });
}
