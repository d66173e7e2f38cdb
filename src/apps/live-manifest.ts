/**
 * An app's live manifest, compiled under the relay's current limits: the one lookup every
 * place that acts on what an app declares goes through (the members and credentials
 * routes, the console, the effect engines). `liveManifest` answers null when there is
 * nothing to act on; `requireLiveManifest` refuses with a `conflict` saying which.
 */
import { config } from "../config";
import { RelayError } from "../errors";
import { getVersion, type AppRow } from "../db/apps";
import type { CompiledManifest } from "../manifest";
import { compileLive } from "./deploy";

async function compiledLive(env: Env & object, app: AppRow): Promise<CompiledManifest | "no_version" | "not_compiling"> {
  const version = app.currentVersion === null ? undefined : await getVersion(env, app.id, app.currentVersion);
  if (!version) return "no_version";
  return compileLive({ app, version }, config(env)) ?? "not_compiling";
}

/** The live version's compiled manifest, or null (no version, or it no longer compiles). */
export async function liveManifest(env: Env & object, app: AppRow): Promise<CompiledManifest | null> {
  const live = await compiledLive(env, app);
  return typeof live === "string" ? null : live;
}

/** The compiled live manifest, or `conflict`: the app has no live version, or its manifest no longer compiles. */
export async function requireLiveManifest(env: Env & object, app: AppRow): Promise<CompiledManifest> {
  const live = await compiledLive(env, app);
  if (live === "no_version") throw new RelayError("conflict", "This app has no live version.");
  if (live === "not_compiling") throw new RelayError("conflict", "This app's live manifest no longer compiles under the relay's limits; redeploy it first.");
  return live;
}
