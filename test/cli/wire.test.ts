// What the CLI puts on the wire, checked against a small recording stand-in relay on
// loopback (so the test controls every answer): the x-service-cli-version header (sent
// everywhere except `agent claim`), the registration secret as a bearer token, the
// fallback to direct registration when the relay has no device flow, and the device
// poll's handling of 429, access_denied and expired_token.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanupTempHomes, root, runCli, tempHome } from "./helpers.ts";

const pkgVersion = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }).version;
const KEY = "svc_00112233445566778899aabbccddeeff";

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

type Handler = (req: Seen) => { status: number; body?: unknown };

let server: Server;
let url: string;
let seen: Seen[] = [];
let handler: Handler = () => ({ status: 404, body: { error: { code: "not_found", message: "nothing here" } } });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      const entry = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, at: Date.now() };
      seen.push(entry);
      const answer = handler(entry);
      res.writeHead(answer.status, answer.body === undefined ? {} : { "content-type": "application/json" });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => { seen = []; });
afterEach(() => cleanupTempHomes());

const registered = { status: 201, body: { agent_id: "agent1", api_key: KEY, key_prefix: KEY.slice(0, 10) } };
const deviceCode = { device_code: "dc_1", user_code: "BCDF-GHJK", verification_uri: "x/device", verification_uri_complete: "x/device?code=BCDF-GHJK", expires_in: 60, interval: 1 };

describe("headers", () => {
  it("sends x-service-cli-version on registration, keys and skill calls but not on agent claim", async () => {
    handler = (req) => {
      if (req.path === "/v1/register") return registered;
      if (req.path === "/v1/keys") return { status: 200, body: { agent_id: "agent1" } };
      if (req.path === "/v1/agents/claim") return { status: 200, body: { ok: true, owner_human_id: "h1", claimed_at: "now" } };
      if (req.path === "/skills/service/SKILL.md/version") return { status: 200, body: { version: "1.0.0" } };
      return { status: 404, body: { error: { code: "not_found", message: "no" } } };
    };
    const home = tempHome();
    expect((await runCli(home, ["agent", "register", "--no-device", "--url", url])).code).toBe(0);
    expect((await runCli(home, ["key", "list"])).code).toBe(0);
    expect((await runCli(home, ["skill", "version"])).code).toBe(0);
    expect((await runCli(home, ["agent", "claim", "cc_abc"])).code).toBe(0);
    const byPath = Object.fromEntries(seen.map((s) => [s.path, s]));
    expect(byPath["/v1/register"].headers["x-service-cli-version"]).toBe(pkgVersion);
    expect(byPath["/v1/register"].headers.authorization).toBeUndefined();
    expect(byPath["/v1/keys"].headers["x-service-cli-version"]).toBe(pkgVersion);
    expect(byPath["/v1/keys"].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(byPath["/v1/keys"].headers["content-type"]).toBeUndefined();
    expect(byPath["/skills/service/SKILL.md/version"].headers["x-service-cli-version"]).toBe(pkgVersion);
    expect(byPath["/v1/agents/claim"].headers["x-service-cli-version"]).toBeUndefined();
    expect(byPath["/v1/agents/claim"].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(byPath["/v1/agents/claim"].body)).toEqual({ code: "cc_abc" });
  });

  it("sends a registration secret as the bearer of POST /v1/register and skips the device flow", async () => {
    handler = (req) => (req.path === "/v1/register" ? registered : { status: 500, body: {} });
    const viaEnv = await runCli(tempHome(), ["agent", "register", "--url", url], { env: { SERVICE_REGISTER_SECRET: "s3cret" } });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const viaStdin = await runCli(tempHome(), ["agent", "register", "--secret", "-", "--url", url], { stdin: "s3cret-2\n" });
    expect(viaStdin.code, viaStdin.stderr).toBe(0);
    expect(viaStdin.stderr).toBe("");
    const literal = await runCli(tempHome(), ["agent", "register", "--secret", "s3cret-3", "--url", url]);
    expect(literal.stderr).toMatch(/^warning: /);
    expect(seen.map((s) => [s.path, s.headers.authorization])).toEqual([
      ["/v1/register", "Bearer s3cret"], ["/v1/register", "Bearer s3cret-2"], ["/v1/register", "Bearer s3cret-3"],
    ]);
    expect(viaEnv.json()).toMatchObject({ agent_id: "agent1", registered_via: "direct" });
  });
});

describe("replacing a saved key", () => {
  it("warns (masked) when register overwrites a profile's key", async () => {
    handler = (req) => (req.path === "/v1/register" ? registered : { status: 404, body: {} });
    const home = tempHome();
    expect((await runCli(home, ["agent", "register", "--no-device", "--url", url])).stderr).toBe("");
    const again = await runCli(home, ["agent", "register", "--no-device", "--url", url]);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`warning: profile "default" held another key (${KEY.slice(0, 10)}…); it was replaced locally but stays valid on its relay until revoked.\n`);
  });
});

describe("device flow against a stand-in relay", () => {
  it("falls back to direct registration with a stderr note when /v1/device/code is 404", async () => {
    handler = (req) => (req.path === "/v1/register" ? registered : { status: 404, body: { error: { code: "not_found", message: "no" } } });
    const run = await runCli(tempHome(), ["agent", "register", "--url", url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^note: .*no device flow/);
    expect(seen.map((s) => s.path)).toEqual(["/v1/device/code", "/v1/register"]);
    expect(JSON.parse(seen[0].body)).toEqual({ name: expect.stringMatching(/^cli-/) });
    expect(run.json()).toMatchObject({ registered_via: "direct" });
  });

  it("treats a 201 from /v1/device/code as a failure (only 200 is valid)", async () => {
    handler = () => ({ status: 201, body: deviceCode });
    const run = await runCli(tempHome(), ["agent", "register", "--url", url]);
    expect(run.code).toBe(1);
    expect(run.error().code).toBe("invalid_response");
  });

  it("polls at the interval, adds 5 s after a 429, and saves the approved key", async () => {
    let polls = 0;
    handler = (req) => {
      if (req.path === "/v1/device/code") return { status: 200, body: deviceCode };
      polls++;
      if (polls === 1) return { status: 400, body: { error: "authorization_pending" } };
      if (polls === 2) return { status: 429, body: { error: { code: "rate_limited", message: "slow" } } };
      return { status: 200, body: { agent_id: "agent2", agent_key: KEY, name: "n" } };
    };
    const home = tempHome();
    const run = await runCli(home, ["agent", "register", "--url", url], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("x/device?code=BCDF-GHJK");
    expect(run.stderr).toContain("BCDF-GHJK");
    expect(run.json()).toEqual({
      agent_id: "agent2", key_prefix: KEY.slice(0, 10), profile: "default",
      saved_to: path.join(home, "service", "config.json"), registered_via: "device",
    });
    const tokenPolls = seen.filter((s) => s.path === "/v1/device/token");
    expect(tokenPolls).toHaveLength(3);
    expect(tokenPolls[0].at - seen[0].at).toBeGreaterThanOrEqual(900);
    expect(tokenPolls[1].at - tokenPolls[0].at).toBeGreaterThanOrEqual(900);
    expect(tokenPolls[2].at - tokenPolls[1].at).toBeGreaterThanOrEqual(5900);
    expect(JSON.parse(tokenPolls[0].body)).toEqual({ device_code: "dc_1" });
  });

  it("keeps polling after a poll that got no answer from the relay (503), with a warning", async () => {
    let polls = 0;
    handler = (req) => {
      if (req.path === "/v1/device/code") return { status: 200, body: deviceCode };
      polls++;
      return polls === 1 ? { status: 503 } : { status: 200, body: { agent_id: "agent3", agent_key: KEY, name: "n" } };
    };
    const run = await runCli(tempHome(), ["agent", "register", "--url", url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/\nwarning: polling the relay failed \(non_json_response: .*\); trying again in 1 s\.\n$/);
    expect(run.json()).toMatchObject({ agent_id: "agent3", registered_via: "device" });
  });

  it("maps access_denied to device_flow_denied and expired_token to device_flow_expired", async () => {
    for (const [rfc, code] of [["access_denied", "device_flow_denied"], ["expired_token", "device_flow_expired"]]) {
      handler = (req) => (req.path === "/v1/device/code" ? { status: 200, body: deviceCode } : { status: 400, body: { error: rfc, error_description: "x" } });
      const run = await runCli(tempHome(), ["agent", "register", "--url", url]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(JSON.parse(run.stderr.trim().split("\n").at(-1)!).error.code).toBe(code);
    }
  });
});
