// Controlling a relay of its own from the reliability tests (node project): its process
// started by scripts/relay-process.mjs, stopped (SIGTERM to its group) or crashed
// (SIGKILL) and waited for until its port is free, each block with local files of its
// own (ownRelay); plain JSON calls to it; a claimed agent key made through its
// development mail outbox. Shared by the kill-and-restart tests so each file keeps only
// its scenario. Loopback only.
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect } from "vitest";
import { waitFor } from "../support/wait.ts";
// @ts-expect-error plain JavaScript module, no type declarations
import { freePort, startRelay } from "../../scripts/relay-process.mjs";

export interface Relay {
  url: string;
  port: number;
  stop(): void;
  child: import("node:child_process").ChildProcess;
  output(): string;
}

export type Obj = Record<string, unknown>;

const REQUEST_TIMEOUT_MS = 15_000;

const fakeIp = () => `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;

/** Resolves once nothing accepts connections on the port any more (bounded). */
export async function portClosed(port: number, timeoutMs = 20_000): Promise<void> {
  const accepts = () => new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
  await waitFor(async () => !(await accepts()), { timeout: timeoutMs, interval: 200, message: `port ${port} refusing connections` });
}

/**
 * The relay of one describe block: its own local files, kept across restarts on one
 * loopback port, stopped and removed after the block whatever happened. `start()` starts
 * it (again, after a kill) on that port; `stop()` stops it (SIGTERM) or crashes it
 * (SIGKILL) and waits until the port is free.
 */
export function ownRelay(prefix: string, vars: Record<string, string> = {}) {
  const persistTo = mkdtempSync(path.join(tmpdir(), prefix));
  let relay: Relay | null = null;
  let port: number | null = null;
  afterAll(async () => {
    await stopRelay(relay).catch(() => undefined);
    relay = null;
    rmSync(persistTo, { recursive: true, force: true });
  });
  return {
    persistTo,
    async start(): Promise<Relay> {
      port ??= (await freePort()) as number;
      relay = (await startRelay({ port, persistTo, vars })) as Relay;
      return relay;
    },
    async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
      await stopRelay(relay, signal);
      relay = null;
    },
  };
}

/**
 * Stops the relay's process group (its own stop(), or SIGKILL for a crash) and waits for
 * it to exit and free its port.
 */
export async function stopRelay(relay: Relay | null, signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
  if (!relay) return;
  const exited = () => relay.child.exitCode !== null || relay.child.signalCode !== null;
  if (signal === "SIGTERM") relay.stop();
  else {
    try {
      process.kill(-relay.child.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
  // Bounded: a relay that has not exited in time is killed outright below.
  await waitFor(exited, { timeout: 15_000, interval: 50 }).catch(() => undefined);
  if (!exited()) {
    try {
      process.kill(-relay.child.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
    await waitFor(exited, { timeout: 5_000, interval: 50 }).catch(() => undefined);
  }
  await portClosed(relay.port);
}

export async function call(base: string, method: string, pathName: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${pathName}`, {
    method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), redirect: "manual", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let json: Obj = {};
  try {
    json = JSON.parse(text) as Obj;
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** A claimed agent's key on this relay: register, sign a human in through the dev outbox, claim. */
export async function claimedKey(base: string): Promise<string> {
  const ip = fakeIp();
  const reg = await call(base, "POST", "/v1/register", { body: { name: "restart-test" }, headers: { "cf-connecting-ip": ip } });
  expect(reg.status, reg.text).toBe(201);
  const key = reg.json.api_key as string;
  const email = `restart-${Math.random().toString(36).slice(2, 10)}@example.com`;
  expect((await call(base, "POST", "/v1/auth/request-link", { body: { email }, headers: { "cf-connecting-ip": ip } })).status).toBe(200);
  const mail = await call(base, "GET", `/__dev/mail?to=${encodeURIComponent(email)}`, { headers: { "cf-connecting-ip": ip } });
  const text = ((mail.json.messages as Array<{ text: string }>)?.[0]?.text) ?? "";
  const link = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/.exec(text)?.[0];
  if (!link) throw new Error("no sign-in link in the dev outbox");
  const verified = await fetch(link, { redirect: "manual", headers: { "cf-connecting-ip": ip } });
  const cookie = verified.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("relay_session="));
  if (!cookie) throw new Error("sign-in set no session cookie");
  const code = await call(base, "POST", "/v1/self/claim-codes", { headers: { cookie, origin: base, "cf-connecting-ip": ip } });
  expect(code.status, code.text).toBe(201);
  const claim = await call(base, "POST", "/v1/agents/claim", { key, body: { code: code.json.code }, headers: { "cf-connecting-ip": ip } });
  expect(claim.status, claim.text).toBe(200);
  return key;
}

/** Every live row of a collection, page by page (bounded). */
export async function allRows<Row>(base: string, key: string, appId: string, collection: string): Promise<Row[]> {
  const rows: Row[] = [];
  let since: string | null = null;
  for (let page = 0; page < 50; page++) {
    const q: string = since ? `?limit=1000&since=${encodeURIComponent(since)}` : "?limit=1000";
    const res = await call(base, "GET", `/v1/apps/${appId}/collections/${collection}${q}`, { key });
    expect(res.status, res.text).toBe(200);
    rows.push(...(res.json.rows as Row[]));
    if (res.json.has_more !== true || !res.json.next_cursor) break;
    since = res.json.next_cursor as string;
  }
  return rows;
}

/** The app's whole change feed from the start, page by page (bounded). */
export async function feedEntries(base: string, key: string, appId: string): Promise<Array<{ seq: number; op: string; collection_name: string; row_key: string; row_version: number }>> {
  const entries: Array<{ seq: number; op: string; collection_name: string; row_key: string; row_version: number }> = [];
  let cursor = 0;
  for (let page = 0; page < 50; page++) {
    const res = await call(base, "GET", `/v1/apps/${appId}/feed?since=${cursor}&limit=1000&wait=0`, { key });
    expect(res.status, res.text).toBe(200);
    entries.push(...(res.json.entries as typeof entries));
    cursor = res.json.cursor as number;
    if (res.json.truncated !== true) break;
  }
  return entries;
}
