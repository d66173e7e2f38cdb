// The `service ingest` verbs as a real process against the real test relay: list (secret
// URLs and counts), rotate (the old URL dead at once), signing-secret set (minted and
// printed once; from stdin, SERVICE_INGEST_SIGNING_SECRET or a warned literal) and clear,
// backfill from a JSON array and from NDJSON in chunks (a line that is not JSON counts as
// failed; a second run of the same file is all duplicates), the relay's refusals passed
// through and the local argv errors, which never reach the relay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimedCliAgent, cleanupTempHomes, failed, fakeIp, ok, relayUrl, writeTempFile, type CliAgent } from "./helpers.ts";

type Obj = Record<string, unknown>;

const MANIFEST = {
  "x-service-manifest": {
    app: { name: "Inbound" },
    collections: { issues: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
    ingest: [{ name: "github", collection: "issues", map: { title: "issue.title" }, dedupeKey: "issue.id" }],
  },
};

async function deployApp(agent: CliAgent): Promise<{ app_id: string; slug: string }> {
  const res = await fetch(`${relayUrl()}/v1/apps`, {
    method: "POST", body: JSON.stringify({ html: "<p>in</p>", manifest: MANIFEST }),
    headers: { "content-type": "application/json", "cf-connecting-ip": fakeIp(), authorization: `Bearer ${agent.key}` },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { app_id: string; slug: string };
}

interface Hook { name: string; url: string; signingSecret: { configured: boolean; fingerprint: string | null }; deliveries: Obj }

afterAll(() => {
  cleanupTempHomes();
});

describe("service ingest", () => {
  let me: CliAgent;
  let app: { app_id: string; slug: string };
  beforeAll(async () => {
    me = await claimedCliAgent("cli-ingest-test");
    app = await deployApp(me);
  });

  it("list and rotate: the URL works, and after rotate only the new one does", async () => {
    const [hook] = ok(await me.cli(["ingest", "list", "--app", app.slug])).json<{ hooks: Hook[] }>().hooks;
    expect(hook).toMatchObject({ name: "github", collection: "issues", verify: null, deliveries: { accepted: 0, failed: 0, dropped_duplicate: 0 } });
    const send = (url: string) => fetch(url, { method: "POST", body: JSON.stringify({ issue: { id: 1, title: "t" } }), headers: { "content-type": "application/json", "cf-connecting-ip": fakeIp() } });
    expect((await send(hook.url)).status).toBe(200);
    const rotated = ok(await me.cli(["ingest", "rotate", "--app", app.app_id, "--name", "github"])).json<{ hook: { name: string; url: string } }>().hook;
    expect(rotated.name).toBe("github");
    expect(rotated.url).not.toBe(hook.url);
    expect((await send(hook.url)).status).toBe(404);
    expect((await send(rotated.url)).status).toBe(200);
    const [after] = ok(await me.cli(["ingest", "list", "--app", app.slug])).json<{ hooks: Hook[] }>().hooks;
    expect(after.deliveries).toEqual({ accepted: 1, failed: 0, dropped_duplicate: 1 });
  });

  it("signing-secret set (minted, stdin, environment, literal with a warning) and clear", async () => {
    const base = ["ingest", "signing-secret", "set", "--app", app.slug, "--name", "github"];
    const minted = ok(await me.cli(base)).json<{ secret: string; fingerprint: string; setAt: string }>();
    expect(minted.secret).toMatch(/^ihk_[0-9a-f]{32}$/);
    const fromStdin = ok(await me.cli([...base, "--secret", "-", "--grace-seconds", "0"], { stdin: "stdin-signing-secret-0001\n" }));
    expect(Object.keys(fromStdin.json<Obj>()).sort()).toEqual(["fingerprint", "setAt"]);
    expect(fromStdin.stderr).toBe("");
    const fromEnv = ok(await me.cli(base, { env: { SERVICE_INGEST_SIGNING_SECRET: "env-signing-secret-00001" } }));
    expect(fromEnv.json<Obj>().secret).toBeUndefined();
    const literal = ok(await me.cli([...base, "--secret", "literal-signing-secret-1"]));
    expect(literal.stderr).toMatch(/^warning: /);
    const [hook] = ok(await me.cli(["ingest", "list", "--app", app.slug])).json<{ hooks: Hook[] }>().hooks;
    expect(hook.signingSecret.configured).toBe(true);
    expect(JSON.stringify(hook)).not.toContain("literal-signing-secret-1");
    expect(ok(await me.cli(["ingest", "signing-secret", "clear", "--app", app.slug, "--name", "github"])).json()).toEqual({ ok: true });
    const [cleared] = ok(await me.cli(["ingest", "list", "--app", app.slug])).json<{ hooks: Hook[] }>().hooks;
    expect(cleared.signingSecret).toMatchObject({ configured: false, fingerprint: null });
  });

  it("backfill from a JSON array and from NDJSON in chunks; a second run is all duplicates", async () => {
    const fresh = await deployApp(me);
    const bodies = Array.from({ length: 5 }, (_, n) => ({ issue: { id: 100 + n, title: `issue ${n}` } }));
    const arrayFile = writeTempFile("bodies.json", JSON.stringify(bodies.slice(0, 2)));
    const first = ok(await me.cli(["ingest", "backfill", "--app", fresh.slug, "--name", "github", "--file", arrayFile])).json<Obj>();
    expect(first).toEqual({ app: fresh.app_id, hook: "github", total: 2, accepted: 2, dropped_duplicate: 0, failed: 0, chunks: 1 });
    const ndjson = writeTempFile("bodies.ndjson", `${bodies.map((b) => JSON.stringify(b)).join("\n")}\n{not json\n`);
    const second = ok(await me.cli(["ingest", "backfill", "--app", fresh.slug, "--name", "github", "--file", ndjson, "--chunk", "2"]));
    expect(second.json<Obj>()).toEqual({ app: fresh.app_id, hook: "github", total: 6, accepted: 3, dropped_duplicate: 2, failed: 1, chunks: 3 });
    expect(second.stderr).toBe("");
    const again = ok(await me.cli(["ingest", "backfill", "--app", fresh.slug, "--name", "github", "--file", ndjson])).json<Obj>();
    expect(again).toMatchObject({ total: 6, accepted: 0, dropped_duplicate: 5, failed: 1, chunks: 1 });
    const rows = await fetch(`${relayUrl()}/v1/apps/${fresh.app_id}/collections/issues?limit=100`, { headers: { authorization: `Bearer ${me.key}`, "cf-connecting-ip": fakeIp() } });
    expect(((await rows.json()) as { rows: unknown[] }).rows).toHaveLength(5);
  });

  it("argv errors stay local; the relay's refusals are passed through", async () => {
    failed(await me.cli(["ingest", "rotate", "--app", app.slug]), "invalid_args");
    failed(await me.cli(["ingest", "rotate", "--app", app.slug, "--name", "Bad Name"]), "invalid_args");
    failed(await me.cli(["ingest", "signing-secret", "toggle", "--app", app.slug, "--name", "github"]), "invalid_args");
    failed(await me.cli(["ingest", "signing-secret", "clear", "--app", app.slug, "--name", "github", "--grace-seconds", "5"]), "invalid_args");
    failed(await me.cli(["ingest", "signing-secret", "set", "--app", app.slug, "--name", "github", "--grace-seconds", "90000"]), "invalid_args");
    failed(await me.cli(["ingest", "backfill", "--app", app.slug, "--name", "github"]), "invalid_args");
    failed(await me.cli(["ingest", "backfill", "--app", app.slug, "--name", "github", "--file", writeTempFile("x.json", "[1,"), "--chunk", "2"]), "invalid_args");
    failed(await me.cli(["ingest", "rotate", "--app", app.slug, "--name", "nope"]), "ingest_not_found");
    failed(await me.cli(["ingest", "list", "--app", "no-such-app"]), "app_not_found");
  });
});
