// Shared material for the agent task tests: an owner with an agent, an app whose manifest
// has agentTasks rules, writes that make tasks through the real path (write → outbox →
// queue → consumer → D1), and the claim/ack/nack calls of WIRE §2.8.
import { expect } from "vitest";
import { call, callWith, claimedAgent, json, signIn, type SignedIn } from "../helpers";
import { waitFor } from "../../support/wait";

export type Obj = Record<string, unknown>;

export interface Envelope {
  task_id: string; app_id: string; app_slug: string; task_type: string; prompt: string;
  context: { row: { key: string; data: unknown } }; context_warning: string; collection: string; row_key: string;
  reads: string[]; writes: string[]; lease_expires_at: string; api_base: string; credential: string;
}

export interface OwnerTask {
  task_id: string; status: string; attempts: number; report: string | null; row_key: string; task_type: string;
  lease_expires_at: string | null; available_at: string;
}

/** Issues (fire on create), summaries (written back), notes (read only), secrets (out of reach). */
export function taskManifest(rules: Obj[] = [summariseRule()], extra: Obj = {}): Obj {
  const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };
  return {
    "x-service-manifest": {
      app: { name: "Tasks" },
      collections: { issues: owned, summaries: owned, notes: owned, secrets: owned },
      agentTasks: rules,
      ...extra,
    },
  };
}

export function summariseRule(over: Obj = {}): Obj {
  return { on: "create", collection: "issues", taskType: "summarise", prompt: "Summarise the issue in one line.", reads: ["notes"], writes: ["summaries"], ...over };
}

export interface TaskApp {
  human: SignedIn;
  key: string;
  appId: string;
  slug: string;
}

export async function taskApp(manifest: Obj = taskManifest(), human?: SignedIn): Promise<TaskApp> {
  const owner = human ?? await signIn();
  const key = (await claimedAgent(owner)).api_key;
  const app = await json<{ app_id: string; slug: string }>(await call("/v1/apps", { key, json: { html: "<p>tasks</p>", manifest } }), 201);
  return { human: owner, key, appId: app.app_id, slug: app.slug };
}

export async function write(t: Pick<TaskApp, "key" | "appId">, collection: string, data: unknown, rowKey?: string): Promise<Obj> {
  const res = await call(`/v1/apps/${t.appId}/collections/${collection}`, { key: t.key, json: { data, ...(rowKey ? { key: rowKey } : {}) } });
  return (await json<{ row: Obj }>(res, 201)).row;
}

export async function ownerTasks(t: Pick<TaskApp, "key" | "appId">, query = ""): Promise<OwnerTask[]> {
  return (await json<{ tasks: OwnerTask[] }>(await call(`/v1/apps/${t.appId}/agent-tasks${query}`, { key: t.key }), 200)).tasks;
}

/** Waits until the app has `count` tasks in `status` (the consumer runs about a second after the write). */
export async function tasksIn(t: Pick<TaskApp, "key" | "appId">, status: string, count = 1, timeout = 30_000): Promise<OwnerTask[]> {
  return waitFor(async () => {
    const tasks = (await ownerTasks(t)).filter((task) => task.status === status);
    return tasks.length >= count ? tasks : null;
  }, { timeout, interval: 100, message: `${count} ${status} task(s)` });
}

export async function claim(key: string, body: Obj = { max: 10 }, overrides?: Record<string, unknown>): Promise<Envelope[]> {
  const res = overrides ? await callWith(overrides, "/v1/agent-tasks/claim", { key, json: body }) : await call("/v1/agent-tasks/claim", { key, json: body });
  return (await json<{ tasks: Envelope[] }>(res, 200)).tasks;
}

export function ack(key: string, taskId: string, body: Obj = {}): Promise<Response> {
  return call(`/v1/agent-tasks/${taskId}/ack`, { key, json: body });
}

export function nack(key: string, taskId: string, body: Obj = { report: "failed" }, overrides?: Record<string, unknown>): Promise<Response> {
  return overrides ? callWith(overrides, `/v1/agent-tasks/${taskId}/nack`, { key, json: body }) : call(`/v1/agent-tasks/${taskId}/nack`, { key, json: body });
}

/** A call to the collection endpoints with a lease credential. */
export function withLease(credential: string, appId: string, path: string, opts: { method?: string; json?: unknown } = {}): Promise<Response> {
  return call(`/v1/apps/${appId}/collections/${path}`, { key: credential, ...opts });
}

export function expectEnvelope(task: Envelope): void {
  expect(Object.keys(task).sort()).toEqual([
    "api_base", "app_id", "app_slug", "collection", "context", "context_warning", "credential", "lease_expires_at", "prompt",
    "reads", "row_key", "task_id", "task_type", "writes",
  ]);
  expect(task.credential).toMatch(/^svcc_[0-9a-f]{32}$/);
  expect(task.context_warning.length).toBeGreaterThan(20);
  expect(Date.parse(task.lease_expires_at)).toBeGreaterThan(Date.now());
}
