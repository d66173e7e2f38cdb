// The `service connections` verbs as a real process against the real test relay: create
// (static with the header value from stdin, from SERVICE_CONNECTION_HEADER_VALUE or as a
// warned literal; oauth2 with the client secret from SERVICE_CONNECTION_CLIENT_SECRET and
// JSON parameters), list (fingerprints, never secrets), delete (idempotent, WIRE §6.7's
// output), authorize-url (built locally: no network call with an app id), deliveries and
// replay on the webhook journal; the relay's refusals passed through, and the local argv
// errors, which never reach the relay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempHomes, closedPort, fakeIp, mintClaimCode, relayUrl, runCli, signIn, tempHome, uniqueEmail, type CliRun, type RunOptions } from "./helpers.ts";

type Obj = Record<string, unknown>;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": { app: { name: "Hooks" }, collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } } },
};

const SECRET = "Bearer sk_cli_connection_secret_0123456789";

interface Agent {
  key: string;
  cli(args: string[], options?: RunOptions): Promise<CliRun>;
}

async function post<T>(path: string, body: unknown, key?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${relayUrl()}${path}`, {
    method: "POST", body: JSON.stringify(body),
    headers: { "content-type": "application/json", "cf-connecting-ip": fakeIp(), ...(key ? { authorization: `Bearer ${key}` } : {}) },
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function claimedAgent(): Promise<Agent> {
  const reg = await post<{ api_key: string }>("/v1/register", { name: "cli-connections-test" });
  expect(reg.status).toBe(201);
  const key = reg.body.api_key;
  const code = await mintClaimCode(await signIn(uniqueEmail("connections-owner")));
  expect((await post("/v1/agents/claim", { code }, key)).status).toBe(200);
  const home = tempHome();
  return { key, cli: (args, options = {}) => runCli(home, args, { ...options, env: { SERVICE_URL: relayUrl(), SERVICE_API_KEY: key, ...options.env } }) };
}

async function deployApp(agent: Agent): Promise<{ app_id: string; slug: string }> {
  const res = await post<{ app_id: string; slug: string }>("/v1/apps", { html: "<h1>hooks</h1>", manifest: MANIFEST, visibility: "private" }, agent.key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

function ok(run: CliRun): CliRun {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  expect(run.stderr).toBe("");
  return run;
}

function failed(run: CliRun, code: string) {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toBe("");
  const error = run.error();
  expect(error.code).toBe(code);
  return error;
}

afterAll(() => {
  cleanupTempHomes();
});

describe("service connections", () => {
  let me: Agent;
  beforeAll(async () => {
    me = await claimedAgent();
  });

  it("create (stdin, environment, literal), list and delete, by id and by slug, never printing a secret", async () => {
    const app = await deployApp(me);
    const base = ["--app", app.slug, "--allowed-host", "api.example.com"];

    const fromStdin = ok(await me.cli(["connections", "create", ...base, "--name", "crm", "--header-value", "-", "--provider", "Acme"], { stdin: `${SECRET}\n` }));
    const crm = fromStdin.json<{ connection: Obj }>().connection;
    expect(crm).toMatchObject({ name: "crm", kind: "static", status: "active", allowedHost: "api.example.com", headerName: "Authorization", provider: "Acme" });
    expect(fromStdin.stdout).not.toContain("sk_cli");

    const fromEnv = ok(await me.cli(["connections", "create", ...base, "--name", "crm-env", "--header-name", "X-Api-Key"], { env: { SERVICE_CONNECTION_HEADER_VALUE: SECRET } }));
    const env = fromEnv.json<{ connection: Obj }>().connection;
    expect(env).toMatchObject({ name: "crm-env", headerName: "X-Api-Key", secretFingerprint: crm.secretFingerprint });

    const literal = await me.cli(["connections", "create", ...base, "--name", "crm-literal", "--header-value", "plain-value"]);
    expect(literal.code).toBe(0);
    expect(literal.stderr).toMatch(/^warning: passing the header value as a literal argument exposes it/);
    expect(literal.stdout).not.toContain("plain-value");

    const oauth = ok(await me.cli([
      "connections", "create", "--app", app.app_id, "--name", "calendar", "--kind", "oauth2", "--allowed-host", "*.example.com",
      "--authorize-url", "https://auth.example.com/authorize", "--token-url", "https://auth.example.com/token", "--client-id", "abc",
      "--scopes", "calendar.read", "--instance-field", "instance_url", "--auth-params", '{"prompt":"consent"}',
    ], { env: { SERVICE_CONNECTION_CLIENT_SECRET: "client-secret-from-env" } }));
    expect(oauth.json<{ connection: Obj }>().connection).toMatchObject({ kind: "oauth2", status: "pending_auth", authScheme: "Bearer", scopes: "calendar.read" });
    expect(oauth.stdout).not.toContain("client-secret-from-env");

    const listed = ok(await me.cli(["connections", "list", "--app", app.slug]));
    expect(listed.stdout).toMatch(/^\{\n {2}"connections": \[/);
    expect(listed.json<{ connections: Obj[] }>().connections.map((c) => [c.name, c.status])).toEqual([
      ["crm", "active"], ["crm-env", "active"], ["crm-literal", "active"], ["calendar", "pending_auth"],
    ]);
    expect(listed.stdout).not.toMatch(/sk_cli|plain-value|client-secret-from-env/);

    for (let i = 0; i < 2; i++) {
      expect(ok(await me.cli(["connections", "delete", "--app", app.slug, "--name", "crm"])).json()).toEqual({ deleted: true, app_id: app.app_id, name: "crm" });
    }
    expect(ok(await me.cli(["connections", "list", "--app", app.app_id])).json<{ connections: Obj[] }>().connections).toHaveLength(3);
  });

  it("authorize-url builds the consent link without the network for an app id, and resolves a slug first", async () => {
    const app = await deployApp(me);
    const expected = `${relayUrl()}/v1/apps/${app.app_id}/connections/calendar/authorize`;
    const offline = ok(await me.cli(["connections", "authorize-url", "--app", app.app_id, "--name", "calendar"], { env: { SERVICE_URL: `http://127.0.0.1:${await closedPort()}` } }));
    expect(offline.json<Obj>().authorize_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/apps\/[a-z0-9]+\/connections\/calendar\/authorize$/);
    expect(ok(await me.cli(["connections", "authorize-url", "--app", app.slug, "--name", "calendar"])).json()).toEqual({ app_id: app.app_id, name: "calendar", authorize_url: expected });
  });

  it("deliveries and replay read the app's webhook journal", async () => {
    const app = await deployApp(me);
    expect(ok(await me.cli(["connections", "deliveries", "--app", app.slug, "--status", "failed", "--collection", "notes", "--limit", "10"])).json()).toEqual({ deliveries: [] });
    expect(ok(await me.cli(["connections", "deliveries", "--app", app.app_id])).json()).toEqual({ deliveries: [] });
    const missing = await me.cli(["connections", "replay", "--app", app.app_id, "--delivery", "whd_nothing"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.error().code).toMatch(/not_found/);
  });

  it("passes the relay's refusals through: a bad host, a taken name, another owner's app", async () => {
    const app = await deployApp(me);
    const bad = failed(await me.cli(["connections", "create", "--app", app.app_id, "--name", "crm", "--allowed-host", "https://api.example.com", "--header-value", "-"], { stdin: SECRET }), "connection_invalid");
    expect(bad.details).toMatchObject({ field: "allowedHost" });
    ok(await me.cli(["connections", "create", "--app", app.app_id, "--name", "crm", "--allowed-host", "api.example.com"], { env: { SERVICE_CONNECTION_HEADER_VALUE: SECRET } }));
    failed(await me.cli(["connections", "create", "--app", app.app_id, "--name", "crm", "--allowed-host", "api.example.com"], { env: { SERVICE_CONNECTION_HEADER_VALUE: SECRET } }), "conflict");
    const stranger = await claimedAgent();
    failed(await stranger.cli(["connections", "list", "--app", app.app_id]), "app_not_found");
  });

  it("refuses bad arguments locally, before any request", async () => {
    const offline = { env: { SERVICE_URL: `http://127.0.0.1:${await closedPort()}` } };
    const cases: Array<[string[], string, RunOptions?]> = [
      [["connections", "create", "--app", "x", "--allowed-host", "api.example.com", "--header-value", "-"], "--name"],
      [["connections", "create", "--app", "x", "--name", "Bad Name", "--allowed-host", "a.example.com", "--header-value", "-"], "--name"],
      [["connections", "create", "--app", "x", "--name", "crm", "--header-value", "-"], "--allowed-host"],
      [["connections", "create", "--app", "x", "--name", "crm", "--allowed-host", "a.example.com", "--kind", "basic"], "--kind"],
      [["connections", "create", "--app", "x", "--name", "crm", "--allowed-host", "a.example.com", "--client-id", "c", "--header-value", "-"], "--client-id"],
      [["connections", "create", "--app", "x", "--name", "crm", "--allowed-host", "a.example.com", "--kind", "oauth2", "--header-value", "v"], "--header-value"],
      [["connections", "create", "--app", "x", "--name", "crm", "--allowed-host", "a.example.com"], "--header-value"],
      [["connections", "create", "--app", "x", "--name", "crm", "--kind", "oauth2", "--allowed-host", "a.example.com", "--authorize-url", "https://a.example.com/a", "--token-url", "https://a.example.com/t", "--client-id", "c"], "--client-secret"],
      [["connections", "create", "--app", "x", "--name", "crm", "--kind", "oauth2", "--allowed-host", "a.example.com", "--client-secret", "-", "--auth-params", "-"], "stdin"],
      [["connections", "create", "--app", "x", "--name", "crm", "--kind", "oauth2", "--allowed-host", "a.example.com", "--authorize-url", "https://a.example.com/a", "--token-url", "https://a.example.com/t", "--client-id", "c", "--auth-params", "[1]"], "--auth-params", { env: { SERVICE_CONNECTION_CLIENT_SECRET: "s" } }],
      [["connections", "delete", "--app", "x"], "--name"],
      [["connections", "authorize-url", "--name", "crm"], "--app"],
      [["connections", "deliveries", "--app", "x", "--status", "lost"], "--status"],
      [["connections", "deliveries", "--app", "x", "--limit", "101"], "--limit"],
      [["connections", "deliveries", "--app", "x", "--limit", "0"], "--limit"],
      [["connections", "replay", "--app", "x"], "--delivery"],
      [["connections", "create", "--app", "x", "--name", "crm", "--allowed-host", "a.example.com", "--colour", "red"], "--colour"],
    ];
    for (const [args, mentions, options] of cases) {
      const run = await me.cli(args, { ...offline, ...options, env: { ...offline.env, ...options?.env } });
      expect(run.code, `${args.join(" ")}\n${run.stderr}`).toBe(1);
      expect(run.stdout).toBe("");
      const error = run.error();
      expect(error.code, args.join(" ")).toBe("invalid_args");
      expect(error.message, args.join(" ")).toContain(mentions);
    }
  });

  it("lists every verb in its help", async () => {
    const help = await me.cli(["connections", "--help"]);
    expect(help.code).toBe(0);
    for (const verb of ["create", "list", "delete", "deliveries", "replay", "authorize-url"]) expect(help.stdout + help.stderr).toContain(verb);
  });
});
