/**
 * How a template version would land on an installed app, judged against the live
 * version and the live rows (spec B "Template upgrades"; WIRE §2.14): the redeploy gate's
 * breaks split into strandings and widenings, the gate's schema and removed-collection
 * breaks replaced by the live rows the new manifest would actually refuse, and what the
 * version may reach beyond the live one (the permission diff and its plain sentences).
 * Upgrades and reverts (upgrade.ts) act on this judgement.
 */
import { RelayError } from "../errors";
import { config } from "../config";
import { getVersion, type AppRow } from "../db/apps";
import { compile, compileLive } from "../apps/deploy";
import { appStore } from "../apps/store";
import { compatParts, disclosure, originCovered, validateRow, type CompatBreak, type CompiledManifest } from "../manifest";

export interface PermissionDiff {
  external_hosts: string[];
  embeds: string[];
  capabilities: string[];
  cdn: boolean;
  offline: boolean;
  webhook_rules: string[];
  is_empty: boolean;
}

/** What the new manifest may reach that the live one may not. */
function permissionDiff(live: CompiledManifest | null, next: CompiledManifest): { permissions: PermissionDiff; lines: string[] } {
  const before = live ? disclosure(live) : null;
  const after = disclosure(next);
  const permissions = {
    external_hosts: after.external_hosts.filter((h) => !before || !originCovered(h, before.external_hosts)),
    embeds: after.embeds.filter((h) => !before || !originCovered(h, before.embeds)),
    capabilities: after.capabilities.filter((c) => !before?.capabilities.includes(c)),
    cdn: after.cdn && !before?.cdn,
    offline: after.offline && !before?.offline,
    webhook_rules: after.webhook_targets.filter((t) => !before?.webhook_targets.includes(t)),
  };
  const lines = [
    ...permissions.external_hosts.map((h) => `The page may connect to ${h}.`),
    ...permissions.embeds.map((h) => `The page may embed content from ${h}.`),
    ...(permissions.capabilities.length ? [`The page may ask the browser for: ${permissions.capabilities.join(", ")}.`] : []),
    ...(permissions.cdn ? ["The page may load scripts and styles from any https website."] : []),
    ...(permissions.offline ? ["The app installs a service worker so it works offline."] : []),
    ...permissions.webhook_rules.map((t) => `Rows may be sent to ${t.startsWith("setting:") ? `the address stored in setting "${t.slice(8)}"` : t}.`),
  ];
  const isEmpty = lines.length === 0;
  return { permissions: { ...permissions, is_empty: isEmpty }, lines };
}

export const NO_PERMISSIONS: PermissionDiff = { external_hosts: [], embeds: [], capabilities: [], cdn: false, offline: false, webhook_rules: [], is_empty: true };

export interface Judgement {
  compat: "clean" | "forced" | "incompatible";
  strandings: CompatBreak[];
  widenings: CompatBreak[];
  permissions: PermissionDiff;
  lines: string[];
}

/** The gate between the live version and `manifest`, under the app's own settings. */
export async function judge(env: Env, app: AppRow, manifest: unknown): Promise<Judgement> {
  const cfg = config(env);
  const current = app.currentVersion === null ? undefined : await getVersion(env, app.id, app.currentVersion);
  const live = current ? compileLive({ app, version: current }, cfg) : null;
  let next: CompiledManifest;
  try {
    next = compile(manifest, cfg, app.visibility, app.timezone, app.slug);
  } catch (err) {
    if (!(err instanceof RelayError)) throw err;
    const failure = { path: String(err.details?.path ?? "/"), message: `the version does not compile for this app: ${err.message}` };
    return { compat: "incompatible", strandings: [failure], widenings: [], permissions: NO_PERMISSIONS, lines: [] };
  }
  const gated = live ? compatParts(live, next) : { strandings: [], widenings: [] };
  const parts = { ...gated, strandings: await strandedLiveRows(env, app, next, gated.strandings) };
  const { permissions, lines } = permissionDiff(live, next);
  const compat = parts.strandings.length ? "incompatible" : parts.widenings.length || !permissions.is_empty ? "forced" : "clean";
  return { compat, ...parts, permissions, lines };
}

/**
 * A removed collection or a changed schema strands nothing when no live row is left
 * without a home: those breaks of the static gate are replaced by the live rows that the
 * new manifest would refuse (first 20). Other strandings (append-only, key claims,
 * storage) stand as the gate found them.
 */
async function strandedLiveRows(env: Env, app: AppRow, next: CompiledManifest, strandings: CompatBreak[]): Promise<CompatBreak[]> {
  const byRows = (b: CompatBreak) => b.path.startsWith("$defs") || b.path.endsWith(".schema") || /^x-service-manifest\.collections\.[^.[]+$/.test(b.path);
  const rowChecked = strandings.filter(byRows);
  if (rowChecked.length === 0 || app.currentVersion === null) return strandings;
  const found: CompatBreak[] = [];
  const call = { appId: app.id, version: app.currentVersion, principal: { kind: "agent" as const, agentId: app.createdByAgentId } };
  let after: number | null = 0;
  while (after !== null && found.length < 20) {
    const page = await appStore(env, app.id).exportRows(call, after, 500);
    if (!page.ok) throw new RelayError(page.error.code, page.error.message, page.error.details);
    for (const row of page.value.rows) {
      const path = `x-service-manifest.collections.${row.collection}`;
      if (!next.collections[row.collection]) found.push({ path, message: `collection "${row.collection}" is removed but live row "${row.key}" is in it` });
      else if (!validateRow(next, row.collection, row.data).ok) found.push({ path, message: `live row "${row.key}" of "${row.collection}" would not match the new schema` });
    }
    after = page.value.next_after;
  }
  return [...strandings.filter((b) => !byRows(b)), ...found.slice(0, 20)];
}

export function needsAcceptance(j: Judgement): boolean {
  return !j.permissions.is_empty || j.widenings.length > 0;
}
