// Starts one real relay (`wrangler dev`, development mode, fresh local state) on a free
// loopback port for the CLI and browser tests, and stops it after the run.
// Tests read its URL with `inject("relayUrl")`. A loopback stand-in for Turnstile's
// script (turnstile-stand-in.ts) runs beside it and the relay's TURNSTILE_SCRIPT_URL names
// it, so app pages with an antiAbuse collection never reach the network; tests read its
// URL with `inject("turnstileScriptUrl")`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error plain ESM helper shared with `npm start`
import { startRelay } from "../../scripts/relay-process.mjs";
import { startTurnstileStandIn } from "./turnstile-stand-in";

declare module "vitest" {
  export interface ProvidedContext {
    relayUrl: string;
    turnstileScriptUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const persistTo = mkdtempSync(path.join(tmpdir(), "relay-test-"));
  const turnstile = await startTurnstileStandIn();
  // The CLI's processes all call from 127.0.0.1, so the per-address invitation limiter
  // (tested on its own in the worker project) would trip across the CLI test files.
  const vars = { MIN_CLI_VERSION: "0.1.0", TURNSTILE_SCRIPT_URL: turnstile.url, RATE_LIMIT_INVITE: "10000" };
  const relay = await startRelay({ persistTo, vars }).catch(async (err: unknown) => {
    await turnstile.close();
    throw err;
  });
  project.provide("relayUrl", relay.url);
  project.provide("turnstileScriptUrl", turnstile.url);
  return () => {
    relay.stop();
    void turnstile.close();
    rmSync(persistTo, { recursive: true, force: true });
  };
}
