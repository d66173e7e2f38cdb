// `npm start` as a newcomer runs it, and as a test harness leans on it: the relay it
// starts takes 50 agents from one address (every local client shares 127.0.0.1, and the
// per-IP limiter is off in development mode), each claimed, deploying an app and paging a
// 25-row list to its end; settings set in npm start's environment reach the relay; the
// process owns what it starts, so killing its process group (even with SIGKILL) leaves
// nothing running, and when the runtime under wrangler dies npm start says so and exits
// non-zero. Each relay here is npm start itself on a free loopback port with its state in
// a temporary folder; all of it is stopped and removed even when an assertion fails.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
// @ts-expect-error plain ESM helper shared with `npm start`
import { freePort } from "../../scripts/relay-process.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

interface Started {
  url: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

const started: Array<{ child: ChildProcess; state: string }> = [];

/** `npm start` in a process group of its own (so the test can signal the group), up and answering. */
async function npmStart(env: Record<string, string> = {}): Promise<Started> {
  const port = (await freePort()) as number;
  const state = mkdtempSync(path.join(tmpdir(), "relay-npm-start-"));
  const child = spawn(npm, ["start"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), RELAY_STATE_DIR: state, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  started.push({ child, state });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => { stdout += chunk; });
  child.stderr!.on("data", (chunk) => { stderr += chunk; });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await waitFor(() => stdout.includes("The relay is up at") || child.exitCode !== null, {
    timeout: 120_000, interval: 200, message: "npm start to report the relay up",
  }).catch((err: Error) => {
    throw new Error(`${err.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  });
  expect(child.exitCode, `npm start exited early:\n${stdout}\n${stderr}`).toBeNull();
  return { url: `http://localhost:${port}`, child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Every live process in the process group, by command name. */
function groupMembers(groupId: number): Array<{ pid: number; command: string }> {
  const listed = spawnSync("ps", ["-eo", "pid=,pgid=,comm="], { encoding: "utf8" }).stdout;
  return listed.split("\n").map((line) => line.trim().split(/\s+/)).filter((parts) => Number(parts[1]) === groupId)
    .map(([pid, , command]) => ({ pid: Number(pid), command }));
}

afterAll(() => {
  for (const { child, state } of started) {
    try { process.kill(-child.pid!, "SIGKILL"); } catch { /* already gone */ }
    rmSync(state, { recursive: true, force: true });
  }
});

type Obj = Record<string, unknown>;

async function request<T = Obj>(base: string, method: string, route: string, init: { key?: string; cookie?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.cookie) Object.assign(headers, { cookie: init.cookie, origin: base });
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${route}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), redirect: "manual" });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** A human signed in through the development outbox, as the quick start does. */
async function signIn(base: string, email: string): Promise<string> {
  expect((await request(base, "POST", "/v1/auth/request-link", { body: { email } })).status).toBe(200);
  const mail = await request<{ messages: Array<{ text: string }> }>(base, "GET", `/__dev/mail?to=${encodeURIComponent(email)}`);
  const link = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/.exec(mail.body.messages[0]?.text ?? "")?.[0];
  expect(link, "a sign-in link in the development outbox").toBeTruthy();
  const verified = await fetch(link!, { redirect: "manual" });
  const cookie = verified.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("relay_session="));
  expect(cookie, "a session cookie").toBeTruthy();
  return cookie!;
}

type RowPage = { rows: Array<{ data: { n: number } }>; next_cursor: string | null; has_more: boolean };

const MANIFEST = {
  "x-service-manifest": { app: { name: "Notes" }, collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } } },
};
const ROWS = 25;

/** One agent's whole first session: register, be claimed, deploy, write 25 rows, page them to the end. */
async function newcomerAgent(base: string, cookie: string, index: number): Promise<{ key: string; appId: string }> {
  const registered = await request<{ api_key: string }>(base, "POST", "/v1/register", { body: { name: `agent-${index}` } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  const key = registered.body.api_key;
  const code = await request<{ code: string }>(base, "POST", "/v1/self/claim-codes", { cookie });
  expect(code.status).toBe(201);
  const claimed = await request(base, "POST", "/v1/agents/claim", { key, body: { code: code.body.code } });
  expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
  const app = await request<{ app_id: string }>(base, "POST", "/v1/apps", { key, body: { html: `<h1>Notes ${index}</h1>`, manifest: MANIFEST } });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  const appId = app.body.app_id;
  const rows = Array.from({ length: ROWS }, (_, n) => ({ data: { n } }));
  const written = await request<{ ok_count: number }>(base, "POST", `/v1/apps/${appId}/collections/notes/batch`, { key, body: { rows } });
  expect(written.body.ok_count).toBe(ROWS);
  const seen: number[] = [];
  let since: string | null = null;
  let pages = 0;
  do {
    const route: string = `/v1/apps/${appId}/collections/notes?limit=10${since ? `&since=${encodeURIComponent(since)}` : ""}`;
    const page: { status: number; body: RowPage } = await request<RowPage>(base, "GET", route, { key });
    expect(page.status).toBe(200);
    seen.push(...page.body.rows.map((row) => row.data.n));
    expect(page.body.has_more).toBe(page.body.next_cursor !== null);
    since = page.body.next_cursor;
    pages += 1;
    expect(pages, "the list ends").toBeLessThanOrEqual(3);
  } while (since);
  expect(seen).toEqual(Array.from({ length: ROWS }, (_, n) => n));
  return { key, appId };
}

describe("npm start", () => {
  it("serves 50 agents from one address end to end, with the settings of its environment, and dies with its process group", async () => {
    const relay = await npmStart({ MAX_ROWS_PER_APP: String(ROWS) });
    expect(relay.stdout()).toContain(`settings:    MAX_ROWS_PER_APP=${ROWS}`);
    const cookie = await signIn(relay.url, `newcomer-${Date.now()}@example.com`);
    const agents: Array<{ key: string; appId: string }> = [];
    for (let batch = 0; batch < 50; batch += 5) {
      agents.push(...await Promise.all(Array.from({ length: 5 }, (_, i) => newcomerAgent(relay.url, cookie, batch + i))));
    }
    expect(new Set(agents.map((a) => a.appId)).size).toBe(50);

    // MAX_ROWS_PER_APP from npm start's environment: the 26th row does not fit.
    const [first] = agents;
    const over = await request<{ error: { code: string } }>(relay.url, "POST", `/v1/apps/${first.appId}/collections/notes`, { key: first.key, body: { data: { n: ROWS } } });
    expect(over.status).toBe(409);
    expect(over.body.error.code).toBe("app_quota_exceeded");

    // Watch: a long-poll from the feed's end answers with the next write.
    const feedEnd = (await request<{ cursor: number }>(relay.url, "GET", `/v1/apps/${first.appId}/feed?since=0&limit=1000`, { key: first.key })).body.cursor;
    const watching = request<{ entries: Array<{ op: string; row_key: string }> }>(relay.url, "GET", `/v1/apps/${first.appId}/feed?since=${feedEnd}&wait=20`, { key: first.key });
    const deleted = await request(relay.url, "DELETE", `/v1/apps/${first.appId}/collections/notes/${(await request<{ rows: Array<{ key: string }> }>(relay.url, "GET", `/v1/apps/${first.appId}/collections/notes?limit=1`, { key: first.key })).body.rows[0].key}`, { key: first.key });
    expect(deleted.status).toBe(200);
    const watched = await watching;
    expect(watched.status).toBe(200);
    expect(watched.body.entries.map((entry) => entry.op)).toEqual(["delete"]);

    const groupId = relay.child.pid!;
    const members = groupMembers(groupId).map((member) => member.command);
    expect(members).toContain("workerd");
    process.kill(-groupId, "SIGKILL");
    await waitFor(() => groupMembers(groupId).length === 0, { timeout: 20_000, interval: 200, message: "every process npm start started to be gone" });
  }, 300_000);

  it("says so and exits non-zero when the runtime under wrangler dies, leaving nothing running", async () => {
    const relay = await npmStart();
    const groupId = relay.child.pid!;
    const runtimes = groupMembers(groupId).filter((member) => member.command === "workerd");
    expect(runtimes.length).toBeGreaterThan(0);
    for (const runtime of runtimes) process.kill(runtime.pid, "SIGKILL");
    const code = await relay.exited;
    expect(code).not.toBe(0);
    expect(relay.stderr()).toMatch(/The relay (stopped answering|stopped: wrangler dev exited)/);
    await waitFor(() => groupMembers(groupId).length === 0, { timeout: 20_000, interval: 200, message: "wrangler to be gone too" });
  }, 180_000);

  it("a stop signal to npm start alone stops wrangler and its runtime too", async () => {
    const relay = await npmStart();
    const groupId = relay.child.pid!;
    const starter = groupMembers(groupId).find((member) => member.command === "node" && spawnSync("ps", ["-o", "args=", "-p", String(member.pid)], { encoding: "utf8" }).stdout.includes("scripts/start.mjs"));
    expect(starter, "the start script's process").toBeTruthy();
    process.kill(starter!.pid, "SIGTERM");
    await waitFor(() => groupMembers(groupId).length === 0, { timeout: 30_000, interval: 200, message: "everything npm start started to be gone" });
    expect(await relay.exited).toBe(0);
  }, 180_000);
});
