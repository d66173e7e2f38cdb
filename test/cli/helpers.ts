// Shared helpers for the CLI tests: run ./bin/service as a real child process with its
// own temporary config home and a clean environment, and act as a human on the test
// relay (magic-link sign-in through the development outbox, claim codes, device
// approval) over plain HTTP. Every request stays on loopback.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    relayUrl: string;
  }
}

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const cliPath = path.join(root, "bin", "service");

export function relayUrl(): string {
  const url = inject("relayUrl");
  const host = new URL(url).hostname;
  if (host !== "localhost" && host !== "127.0.0.1") throw new Error(`refusing to test a non-local relay: ${url}`);
  return url;
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  json<T = Record<string, unknown>>(): T;
  /** The single stderr error line parsed as JSON. */
  error(): { code: string; message: string; hint?: string; retryable?: boolean; docs_url?: string; report?: string; details?: unknown };
}

export interface RunOptions {
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  /** Called with each stderr chunk while the process runs. */
  onStderr?: (soFar: string) => void;
}

const tempDirs: string[] = [];

/** A fresh temporary directory, removed by cleanupTempHomes. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "service-cli-test-"));
  tempDirs.push(dir);
  return dir;
}

/** A fresh directory used as both HOME and XDG_CONFIG_HOME of one CLI "machine". */
export function tempHome(): string {
  return tempDir();
}

/** Writes `text` to `name` in a fresh temporary directory; returns the file's path. */
export function writeTempFile(name: string, text: string): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, text);
  return file;
}

/** An app package to deploy: index.html with `heading`, manifest.json and an empty assets/. */
export function appPackage(manifest: unknown, heading = "app"): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(path.join(dir, "index.html"), `<!doctype html><h1>${heading}</h1>`);
  writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest));
  return dir;
}

export function cleanupTempHomes(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function configDir(home: string): string {
  return path.join(home, "service");
}

/** Runs the real CLI with only PATH, HOME and XDG_CONFIG_HOME inherited, plus `env`. */
export function runCli(home: string, args: string[], options: RunOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(cliPath, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: home, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.stdout.on("data", (d) => { stdout += d; });
    child.stderr.on("data", (d) => {
      stderr += d;
      options.onStderr?.(stderr);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout,
        stderr,
        json: <T,>() => JSON.parse(stdout) as T,
        error: () => {
          const lines = stderr.trim().split("\n");
          expect(lines, `expected one error line on stderr, got:\n${stderr}`).toHaveLength(1);
          return JSON.parse(lines[0]).error;
        },
      });
    });
    child.stdin.end(options.stdin ?? "");
  });
}

/** A loopback port nothing listens on. */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A client address of its own, so the relay's per-IP limiter sees separate callers. */
export function fakeIp(): string {
  return `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

/** A signed-in human on the relay: its session cookie and a fake client address. */
export interface Human {
  cookie: string;
  ip: string;
}

export async function signIn(email = uniqueEmail("cli")): Promise<Human> {
  const base = relayUrl();
  const ip = fakeIp();
  const requested = await fetch(`${base}/v1/auth/request-link`, {
    method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ email }),
  });
  expect(requested.status).toBe(200);
  const mail = (await (await fetch(`${base}/__dev/mail?to=${encodeURIComponent(email)}`, { headers: { "cf-connecting-ip": ip } })).json()) as {
    messages: Array<{ text: string }>;
  };
  const link = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/.exec(mail.messages[0]?.text ?? "")?.[0];
  if (!link) throw new Error(`no sign-in link in the outbox for ${email}`);
  expect(new URL(link).origin).toBe(base);
  const verified = await fetch(link, { redirect: "manual", headers: { "cf-connecting-ip": ip } });
  expect(verified.status).toBe(302);
  const session = verified.headers.getSetCookie().map((c) => c.split(";")[0]).find((c) => c.startsWith("relay_session="));
  if (!session) throw new Error("the sign-in link set no relay_session cookie");
  return { cookie: session, ip };
}

export async function mintClaimCode(human: Human): Promise<string> {
  const base = relayUrl();
  const res = await fetch(`${base}/v1/self/claim-codes`, {
    method: "POST", headers: { cookie: human.cookie, origin: base, "cf-connecting-ip": human.ip },
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { code: string };
  expect(body.code).toMatch(/^cc_/);
  return body.code;
}

/** Approves or denies a device request as the console's form would. */
export async function decideDevice(human: Human, userCode: string, decision: "approve" | "deny"): Promise<void> {
  const base = relayUrl();
  const res = await fetch(`${base}/device`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: human.cookie, origin: base, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": human.ip },
    body: new URLSearchParams({ code: userCode, decision }).toString(),
  });
  expect(res.status, `POST /device answered ${res.status}`).toBe(303);
}

export interface CliAgent {
  key: string;
  home: string;
  cli(args: string[], options?: RunOptions): Promise<CliRun>;
}

/**
 * A claimed agent, registered and claimed over HTTP from an address of its own (the
 * relay limits registrations per address), with its own CLI home; its human signs in as
 * `email` when given (a fresh address otherwise).
 */
export async function claimedCliAgent(name = "cli-test", email?: string): Promise<CliAgent> {
  const base = relayUrl();
  const ip = fakeIp();
  const reg = await fetch(`${base}/v1/register`, {
    method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ name }),
  });
  expect(reg.status).toBe(201);
  const key = ((await reg.json()) as { api_key: string }).api_key;
  const code = await mintClaimCode(await signIn(email));
  const claim = await fetch(`${base}/v1/agents/claim`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ code }),
  });
  expect(claim.status).toBe(200);
  const home = tempHome();
  return { key, home, cli: (args, options = {}) => runCli(home, args, { ...options, env: { SERVICE_URL: base, SERVICE_API_KEY: key, ...options.env } }) };
}

/** Exit 0, or a failure message showing what the CLI printed. */
export function ok(run: CliRun): CliRun {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return run;
}

/**
 * Exit 1 with exactly one error line of `code` on stderr (`warning:` lines aside). Unless
 * `printed`, stdout must be empty: a failed command prints no result.
 */
export function failed(run: CliRun, code: string, { printed = false } = {}): ReturnType<CliRun["error"]> {
  expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(1);
  if (!printed) expect(run.stdout).toBe("");
  const errors = run.stderr.split("\n").filter((line) => line && !line.startsWith("warning: "));
  expect(errors, run.stderr).toHaveLength(1);
  const error = JSON.parse(errors[0]).error as ReturnType<CliRun["error"]>;
  expect(error.code, run.stderr).toBe(code);
  return error;
}
