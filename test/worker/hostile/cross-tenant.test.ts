// Cross-tenant probes (issue 16): every /v1 route with a path parameter, called by another
// owner's agent with the first owner's ids (app, row key, attachment, grant, credential,
// webhook delivery, agent task, connection, collection). None may answer 2xx or 5xx, an
// app route must answer exactly what it answers for an app that never existed (no
// existence oracle), no answer may carry the first owner's data or address, and afterwards the first
// owner's app, row, grant, credential and attachment are exactly as they were. The routes
// come from the relay's own /v1/openapi.json, so a route added later is probed too.
import { describe, expect, it } from "vitest";
import { call, claimedAgent, json, signIn } from "../helpers";
import { waitFor } from "../../support/wait";

type Obj = Record<string, any>;

const SECRET_TEXT = `tenant-a-only-${crypto.randomUUID()}`;
const manifest = {
  "x-service-manifest": {
    app: { name: "Tenant A" },
    collections: {
      notes: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] },
      summaries: { read: ["owner"], write: ["owner"], delete: ["owner"] },
    },
    roles: { helper: { label: "Helper" } },
    webhooks: [{ on: "create", collection: "notes", url: "http://127.0.0.1:9/hook" }],
    agentTasks: [{ on: "create", collection: "notes", taskType: "summarise", prompt: "Summarise.", reads: ["notes"], writes: ["summaries"] }],
  },
};

/** Tenant A's app and one of each thing it owns. */
async function tenantA() {
  const human = await signIn();
  const key = (await claimedAgent(human)).api_key;
  const app = await json<Obj>(await call("/v1/apps", { key, json: { html: "<p>a</p>", manifest } }), 201);
  const base = `/v1/apps/${app.app_id}`;
  const row = (await json<Obj>(await call(`${base}/collections/notes`, { key, json: { key: "note-a", data: { text: SECRET_TEXT } } }), 201)).row;
  const grant = await json<Obj>(await call(`${base}/grants`, { key, json: { role: "helper", label: "a" } }), 201);
  const credential = await json<Obj>(await call(`${base}/credentials`, { key, json: { grants: [{ collection: "notes", ops: ["read"] }], label: "a" } }), 201);
  const attachment = await json<Obj>(await call("/v1/attachments", { key, json: { scope: "app", app_id: app.app_id, filename: "a.txt", mime: "text/plain", content_base64: btoa(SECRET_TEXT) } }), 201);
  const connection = await call(`${base}/connections`, { key, json: { name: "hooks", kind: "static", allowedHost: "127.0.0.1", headerName: "X-Key", headerValue: SECRET_TEXT } });
  expect(connection.status).toBe(201);
  const delivery = await waitFor(async () => (await json<Obj>(await call(`${base}/webhooks/deliveries`, { key }), 200)).deliveries?.[0] ?? null, { timeout: 30_000, message: "A's delivery" });
  const task = await waitFor(async () => (await json<Obj>(await call(`${base}/agent-tasks`, { key }), 200)).tasks?.[0] ?? null, { timeout: 30_000, message: "A's task" });
  return {
    human, key, app, row, base,
    ids: {
      app: app.app_id as string, row: row.key as string, grant: (grant.grant_id ?? grant.id) as string,
      credential: (credential.credential_id ?? credential.id) as string, attachment: attachment.attachment_id as string,
      delivery: (delivery.delivery_id ?? delivery.id) as string, task: task.task_id as string,
    },
  };
}

type Ids = Awaited<ReturnType<typeof tenantA>>["ids"];

/** The path with A's ids in place of each parameter, chosen by what the path is about. */
function probePath(template: string, ids: Ids): string {
  return template.replace(/\{([A-Za-z_]+)\}/g, (_whole, name: string, offset: number) => {
    const before = template.slice(0, offset);
    if (name === "key") return ids.row;
    if (name === "credentialId") return ids.credential;
    if (name === "grantId") return ids.grant;
    if (name === "deliveryId") return ids.delivery;
    if (name === "taskId") return ids.task;
    if (name === "name") return before.endsWith("/connections/") ? "hooks" : "notes";
    if (name === "id" && before.startsWith("/v1/attachments")) return ids.attachment;
    if (name === "id" || name === "appId") return ids.app;
    return ids.app; // handles, slugs, secrets, refs: A's id stands in, and must find nothing
  });
}

describe("cross-tenant probes", { timeout: 180_000 }, () => {
  it("every route with a path parameter refuses another owner's ids, reveals nothing and changes nothing", async () => {
    const a = await tenantA();
    const intruder = (await claimedAgent(await signIn())).api_key;
    const spec = await json<{ paths: Record<string, Record<string, unknown>> }>(await call("/v1/openapi.json"), 200);
    const probes = Object.entries(spec.paths).filter(([path]) => path.includes("{"))
      .flatMap(([path, methods]) => Object.keys(methods).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m)).map((method) => ({ method, path })));
    expect(probes.length).toBeGreaterThan(60);

    // The same ids, but an app that never existed: an intruder must not tell the two apart.
    const nowhere = { ...a.ids, app: `a${"0".repeat(9)}${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}` };
    const probeOnce = async (method: string, target: string) => {
      const res = await call(target, { key: intruder, method: method.toUpperCase(), ...(method === "get" || method === "delete" ? {} : { json: {} }) });
      const text = await res.text();
      let code: string | undefined;
      try { code = (JSON.parse(text) as Obj).error?.code; } catch { /* not JSON: the status still counts */ }
      expect(text, `${method} ${target} leaked A's data`).not.toContain(SECRET_TEXT);
      expect(text, `${method} ${target} leaked A's address`).not.toContain(a.human.email);
      return { status: res.status, code };
    };
    const answers: Array<{ probe: string; status: number; code?: string; nowhere: { status: number; code?: string } }> = [];
    for (const { method, path } of probes) {
      const real = await probeOnce(method, probePath(path, a.ids));
      const fake = path.includes("/v1/apps/{") ? await probeOnce(method, probePath(path, nowhere)) : real;
      answers.push({ probe: `${method.toUpperCase()} ${path}`, ...real, nowhere: fake });
    }
    const wrong = answers.filter(({ status }) => status < 400 || status >= 500);
    expect(wrong).toEqual([]);
    // On A's app, B gets exactly what an app that never existed gets: no existence oracle.
    const tells = answers.filter(({ status, code, nowhere: fake }) => status !== fake.status || code !== fake.code);
    expect(tells).toEqual([]);

    // Nothing of A's moved.
    const row = await json<Obj>(await call(`${a.base}/collections/notes/note-a`, { key: a.key }), 200);
    expect(row.row).toMatchObject({ key: "note-a", version: 1, data: { text: SECRET_TEXT } });
    expect((await json<Obj>(await call(a.base, { key: a.key }), 200)).app_id ?? a.ids.app).toBe(a.ids.app);
    const grants = (await json<Obj>(await call(`${a.base}/grants`, { key: a.key }), 200)).grants as Obj[];
    expect(grants.some((g) => (g.grant_id ?? g.id) === a.ids.grant && !g.revoked_at)).toBe(true);
    const credentials = (await json<Obj>(await call(`${a.base}/credentials`, { key: a.key }), 200)).credentials as Obj[];
    expect(credentials.some((c) => (c.credential_id ?? c.id) === a.ids.credential && !c.revoked_at)).toBe(true);
    expect((await call(`/v1/attachments/${a.ids.attachment}`, { key: a.key })).status).toBe(200);
    console.log(`cross-tenant: ${answers.length} probes, statuses ${JSON.stringify(answers.reduce<Record<number, number>>((tally, { status }) => ({ ...tally, [status]: (tally[status] ?? 0) + 1 }), {}))}`);
  });
});
