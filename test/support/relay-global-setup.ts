// Starts one real relay (`wrangler dev`, development mode, fresh local state) on a free
// loopback port for the CLI and browser tests, and stops it after the run.
// Tests read its URL with `inject("relayUrl")`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error plain ESM helper shared with `npm start`
import { startRelay } from "../../scripts/relay-process.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    relayUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const persistTo = mkdtempSync(path.join(tmpdir(), "relay-test-"));
  const relay = await startRelay({ persistTo, vars: { MIN_CLI_VERSION: "0.1.0" } });
  project.provide("relayUrl", relay.url);
  return () => {
    relay.stop();
    rmSync(persistTo, { recursive: true, force: true });
  };
}
