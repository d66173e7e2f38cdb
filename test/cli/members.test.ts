// The `service members` verbs as a real process against the real test relay: add (an
// existing account → member; an unknown address → mailed invitation), list (owner
// first), set-role (--custom-role a,b or --clear-role; refusals from the relay), remove
// (idempotent, { removed, app_id, human_id }; the owner refused), roles, and the local
// argv errors, which never reach the relay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempHomes, fakeIp, mintClaimCode, relayUrl, runCli, signIn, tempHome, uniqueEmail, type CliRun, type RunOptions } from "./helpers.ts";

type Obj = Record<string, unknown>;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": {
    app: { name: "Crew" },
    roles: { writer: { label: "Writer" }, viewer: { label: "Viewer", description: "Reads only" } },
    collections: { notes: { read: ["member"], write: ["writer"], update: ["writer"], delete: ["owner"] } },
  },
};

interface Agent {
  key: string;
  ownerEmail: string;
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
  const reg = await post<{ api_key: string }>("/v1/register", { name: "cli-members-test" });
  expect(reg.status).toBe(201);
  const key = reg.body.api_key;
  const ownerEmail = uniqueEmail("members-owner");
  const code = await mintClaimCode(await signIn(ownerEmail));
  expect((await post("/v1/agents/claim", { code }, key)).status).toBe(200);
  const home = tempHome();
  return { key, ownerEmail, cli: (args, options = {}) => runCli(home, args, { ...options, env: { SERVICE_URL: relayUrl(), SERVICE_API_KEY: key, ...options.env } }) };
}

async function deployApp(agent: Agent): Promise<{ app_id: string; slug: string }> {
  const res = await post<{ app_id: string; slug: string }>("/v1/apps", { html: "<h1>crew</h1>", manifest: MANIFEST, visibility: "private" }, agent.key);
  expect(res.status).toBe(201);
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

async function outbox(email: string): Promise<Array<{ subject: string; text: string }>> {
  const res = await fetch(`${relayUrl()}/__dev/mail?to=${encodeURIComponent(email)}`, { headers: { "cf-connecting-ip": fakeIp() } });
  return ((await res.json()) as { messages: Array<{ subject: string; text: string }> }).messages;
}

afterAll(() => {
  cleanupTempHomes();
});

describe("service members", () => {
  // One owning agent for the file: each test deploys an app of its own and changes only
  // that app's members, never the agent.
  let me: Agent;
  beforeAll(async () => {
    me = await claimedAgent();
  });

  it("add, list, set-role, roles and remove, by id and by slug", async () => {
    const app = await deployApp(me);
    const friendEmail = uniqueEmail("members-friend");
    await signIn(friendEmail);

    const added = ok(await me.cli(["members", "add", "--app", app.app_id, "--email", friendEmail])).json<{ member: Obj }>();
    expect(added.member).toMatchObject({ email: friendEmail, role: "member", customRoles: [], customRole: null });
    const humanId = added.member.humanId as string;
    // stdout is pretty JSON (2-space indent).
    expect((await me.cli(["members", "list", "--app", app.slug])).stdout).toMatch(/^\{\n {2}"members": \[/);

    const listed = ok(await me.cli(["members", "list", "--app", app.slug])).json<{ members: Obj[] }>();
    expect(listed.members.map((m) => [m.email, m.role])).toEqual([[me.ownerEmail, "owner"], [friendEmail, "member"]]);

    const set = ok(await me.cli(["members", "set-role", "--app", app.slug, "--human", humanId, "--custom-role", "writer, viewer"])).json<{ member: Obj }>();
    expect(set.member).toMatchObject({ humanId, customRoles: ["writer", "viewer"], customRole: "writer" });
    const cleared = ok(await me.cli(["members", "set-role", "--app", app.app_id, "--human", humanId, "--clear-role"])).json<{ member: Obj }>();
    expect(cleared.member).toMatchObject({ customRoles: [], customRole: null });

    const roles = ok(await me.cli(["members", "roles", "--app", app.slug])).json<{ roles: Obj[] }>();
    expect(roles.roles.map((r) => [r.name, r.label, r.description])).toEqual([["writer", "Writer", null], ["viewer", "Viewer", "Reads only"]]);
    expect(roles.roles[0].collections).toEqual([{
      name: "notes", append_only: false,
      member_access: { read: "all", create: "all", update: "all", delete: "none" },
      grant_access: { read: "none", create: "all", update: "all", delete: "none" },
    }]);

    for (let i = 0; i < 2; i++) {
      const removed = ok(await me.cli(["members", "remove", "--app", app.slug, "--human", humanId])).json();
      expect(removed).toEqual({ removed: true, app_id: app.app_id, human_id: humanId });
    }
    expect(ok(await me.cli(["members", "list", "--app", app.app_id])).json<{ members: Obj[] }>().members).toHaveLength(1);
  });

  it("add mails an invitation to an address without an account", async () => {
    const app = await deployApp(me);
    const email = uniqueEmail("members-invitee");
    const invited = ok(await me.cli(["members", "add", "--app", app.slug, "--email", email, "--role", "member"])).json<Obj>();
    expect(Object.keys(invited).sort()).toEqual(["expires_at", "invited", "ok"]);
    expect(invited).toMatchObject({ ok: true, invited: email });
    const mails = await outbox(email);
    expect(mails[0].subject).toBe("You are invited to Crew");
    expect(mails[0].text).toMatch(/\/invite\?token=inv_[0-9a-f]{32}/);
  });

  it("relays the relay's refusals: undeclared role, the owner, another owner's app", async () => {
    const app = await deployApp(me);
    const friendEmail = uniqueEmail("members-friend");
    await signIn(friendEmail);
    const humanId = ok(await me.cli(["members", "add", "--app", app.app_id, "--email", friendEmail])).json<{ member: Obj }>().member.humanId as string;
    const ownerId = ok(await me.cli(["members", "list", "--app", app.app_id])).json<{ members: Obj[] }>().members[0].humanId as string;

    const undeclared = failed(await me.cli(["members", "set-role", "--app", app.app_id, "--human", humanId, "--custom-role", "ghost"]), "invalid_request");
    expect(undeclared.details).toMatchObject({ field: "custom_roles", role: "ghost" });
    failed(await me.cli(["members", "set-role", "--app", app.app_id, "--human", humanId, "--custom-role", "member"]), "invalid_request");
    failed(await me.cli(["members", "set-role", "--app", app.app_id, "--human", ownerId, "--clear-role"]), "conflict");
    failed(await me.cli(["members", "remove", "--app", app.app_id, "--human", ownerId]), "conflict");
    failed(await me.cli(["members", "add", "--app", app.app_id, "--email", me.ownerEmail]), "conflict");
    failed(await me.cli(["members", "set-role", "--app", app.app_id, "--human", "h-nobody", "--clear-role"]), "not_found");

    const stranger = await claimedAgent();
    for (const args of [["members", "list", "--app", app.app_id], ["members", "roles", "--app", app.slug], ["members", "remove", "--app", app.app_id, "--human", humanId]]) {
      failed(await stranger.cli(args), "app_not_found");
    }
    // Nothing changed for the real owner.
    const members = ok(await me.cli(["members", "list", "--app", app.app_id])).json<{ members: Obj[] }>().members;
    expect(members.map((m) => [m.humanId, m.customRoles])).toEqual([[ownerId, []], [humanId, []]]);
  });

  it("argv errors are local invalid_args naming the verb's help", async () => {
    const home = tempHome();
    // A closed port: none of these may reach a relay.
    const cli = (args: string[]) => runCli(home, args, { env: { SERVICE_URL: "http://127.0.0.1:9", SERVICE_API_KEY: `svc_${"0".repeat(32)}` } });
    const cases: Array<[string[], string]> = [
      [["members", "add", "--email", "a@example.com"], "--app"],
      [["members", "add", "--app", "x"], "--email"],
      [["members", "add", "--app", "x", "--email", "a@example.com", "--role", "owner"], "--role"],
      [["members", "set-role", "--app", "x", "--human", "h"], "exactly one"],
      [["members", "set-role", "--app", "x", "--human", "h", "--custom-role", "a", "--clear-role"], "exactly one"],
      [["members", "set-role", "--app", "x", "--human", "h", "--custom-role", "a,,b"], "empty"],
      [["members", "set-role", "--app", "x", "--custom-role", "a"], "--human"],
      [["members", "remove", "--app", "x"], "--human"],
      [["members", "list"], "--app"],
      [["members", "roles", "--app", "x", "--bogus"], "--bogus"],
      [["members", "list", "--app", "x", "extra"], "extra"],
    ];
    for (const [args, mention] of cases) {
      const error = failed(await cli(args), "invalid_args");
      expect(error.message, args.join(" ")).toContain(mention);
      expect(error.hint).toContain(`service members ${args[1]} --help`);
    }
    const help = await cli(["members", "--help"]);
    expect(help.code).toBe(0);
    for (const verb of ["add", "list", "set-role", "remove", "roles"]) expect(help.stdout).toContain(verb);
  });
});
