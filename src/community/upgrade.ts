/**
 * Template upgrades of an installed app (spec B "Template upgrades"; WIRE §2.2 and
 * TemplateUpgradePreview §2.14): is a newer approved version of the template listed, what
 * would it change, apply it, or go back to the version before the last upgrade.
 *
 * Both directions go through the ordinary redeploy (redeployApp: its compat gate, the
 * unique-index check against live rows, a new app version). The gate's schema and
 * removed-collection breaks are judged against the live rows themselves: a version that
 * would leave a live row without a home is refused outright; one that only widens what the app may do or show needs
 * the owner's explicit acceptance (`accept_permissions`) and is then deployed forced. An
 * `expect_version` pin refuses when the offer moved since the owner looked.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { RelayError } from "../errors";
import { config } from "../config";
import { db } from "../db/client";
import { templateInstalls } from "../db/community-installs-schema";
import { templateSnapshots } from "../db/community-schema";
import { getVersion, type AppRow, type AssetEntry } from "../db/apps";
import { compile, compileLive, redeployApp, type DeployActor } from "../apps/deploy";
import { compatParts, disclosure, originCovered, validateRow, type CompatBreak, type CompiledManifest } from "../manifest";
import { appStore } from "../apps/store";
import { getBlob } from "../blobs/store";
import { nowIso } from "../auth/tokens";
import { publisherByHuman, snapshotContent, snapshotDocument, type SnapshotRow } from "./snapshots";
import { storedAssets } from "./install";
import { compareSemver, isSemver } from "./semver";

export type InstallRow = typeof templateInstalls.$inferSelect;

export async function installOfApp(env: Env, appId: string): Promise<InstallRow | null> {
  const rows = await db(env).select().from(templateInstalls).where(eq(templateInstalls.appId, appId)).limit(1);
  return rows[0] ?? null;
}

/** The highest listed version of the installed template above the one the app runs. */
async function newestOffer(env: Env, install: InstallRow): Promise<SnapshotRow | null> {
  if (install.templateSlug === null) return null;
  const listed = await db(env).select().from(templateSnapshots).where(and(
    eq(templateSnapshots.publisherHumanId, install.publisherHumanId), eq(templateSnapshots.slug, install.templateSlug),
    eq(templateSnapshots.reviewStatus, "approved"), isNull(templateSnapshots.unpublishedAt),
  )).orderBy(desc(templateSnapshots.publishedAt)).limit(100);
  const newer = listed.filter((s) => isSemver(s.version) && isSemver(install.templateVersion) && compareSemver(s.version, install.templateVersion) > 0);
  newer.sort((a, b) => compareSemver(b.version, a.version));
  return newer[0] ?? null;
}

interface PermissionDiff {
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

const NO_PERMISSIONS: PermissionDiff = { external_hosts: [], embeds: [], capabilities: [], cdn: false, offline: false, webhook_rules: [], is_empty: true };

interface Judgement {
  compat: "clean" | "forced" | "incompatible";
  strandings: CompatBreak[];
  widenings: CompatBreak[];
  permissions: PermissionDiff;
  lines: string[];
}

/** The gate between the live version and `manifest`, under the app's own settings. */
async function judge(env: Env, app: AppRow, manifest: unknown): Promise<Judgement> {
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

function needsAcceptance(j: Judgement): boolean {
  return !j.permissions.is_empty || j.widenings.length > 0;
}

/** `<handle>/<slug>` of the installed template, or its snapshot id while the publisher has no handle. */
async function templateName(env: Env, install: InstallRow): Promise<string> {
  const publisher = await publisherByHuman(env, install.publisherHumanId);
  return publisher?.handle && install.templateSlug ? `${publisher.handle}/${install.templateSlug}` : install.installedSnapshotId;
}

/** TemplateUpgradePreview (WIRE §2.14) plus the template's name. */
export async function upgradePreview(env: Env, app: AppRow) {
  const install = await installOfApp(env, app.id);
  const offer = install ? await newestOffer(env, install) : null;
  const judged = offer ? await judge(env, app, snapshotContent(offer).manifest) : null;
  return {
    template: install ? await templateName(env, install) : null,
    available: offer !== null,
    from_version: install?.templateVersion ?? null,
    to_version: offer?.version ?? null,
    changelog: offer?.changelog ?? null,
    snapshot_id: offer?.id ?? null,
    compat: judged?.compat ?? null,
    breaks: judged?.strandings ?? [],
    disclosure_breaks: judged?.widenings ?? [],
    permissions: judged?.permissions ?? NO_PERMISSIONS,
    permission_lines: judged?.lines ?? [],
    blocked: judged?.compat === "incompatible",
    blocked_reason: judged?.compat === "incompatible" ? ("incompatible" as const) : null,
    revert_available: install?.previousAppVersion != null,
  };
}

function requireInstall(install: InstallRow | null, appId: string, verb: "upgrade" | "revert"): InstallRow {
  if (!install) {
    throw new RelayError("conflict", verb === "upgrade"
      ? "This app was not installed from a template, so there is no template upgrade to apply."
      : "This app was not installed from a template, so there is no template upgrade to revert.", { app_id: appId, template: null });
  }
  return install;
}

function refuseStranding(breaks: CompatBreak[], what: string): never {
  throw new RelayError("schema_incompatible_upgrade", `${what} would strand live rows (${breaks.length} break${breaks.length === 1 ? "" : "s"}); nothing was changed.`, { breaks });
}

export interface UpgradeOptions {
  accept_permissions?: boolean;
  expect_version?: string;
}

export async function applyUpgrade(env: Env, actor: DeployActor, app: AppRow, options: UpgradeOptions) {
  const install = requireInstall(await installOfApp(env, app.id), app.id, "upgrade");
  const offer = await newestOffer(env, install);
  if (!offer) throw new RelayError("conflict", `No newer version of the template than ${install.templateVersion} is listed.`, { from_version: install.templateVersion, to_version: null });
  if (options.expect_version !== undefined && options.expect_version !== offer.version) {
    throw new RelayError("conflict", `The version on offer is ${offer.version}, not ${options.expect_version}; check the upgrade again.`, { expected: options.expect_version, to_version: offer.version });
  }
  const content = snapshotContent(offer);
  const judged = await judge(env, app, content.manifest);
  if (judged.compat === "incompatible") refuseStranding(judged.strandings, `Version ${offer.version}`);
  if (needsAcceptance(judged) && options.accept_permissions !== true) {
    throw new RelayError("conflict", `Version ${offer.version} asks for more than the app has now; send accept_permissions: true to accept it.`,
      { reason: "permissions_not_accepted", permissions: judged.permissions, permission_lines: judged.lines, disclosure_breaks: judged.widenings });
  }
  const previousVersion = app.currentVersion;
  // The judgement above is the gate (strandings refused, widenings accepted), so the redeploy is forced past its static one.
  await redeployApp(env, actor, app, {
    html: await snapshotDocument(env, offer), manifest: content.manifest, assets: await storedAssets(env, content.assets), force: true,
  });
  await db(env).update(templateInstalls).set({
    snapshotId: offer.id, templateVersion: offer.version, previousAppVersion: previousVersion, previousSnapshotId: install.snapshotId,
    previousTemplateVersion: install.templateVersion, lastUpgradedAt: nowIso(),
  }).where(eq(templateInstalls.id, install.id));
  return { from_version: install.templateVersion, to_version: offer.version, snapshot_id: offer.id, previous_version_id: previousVersion };
}

export async function revertUpgrade(env: Env, actor: DeployActor, app: AppRow) {
  const install = requireInstall(await installOfApp(env, app.id), app.id, "revert");
  if (install.previousAppVersion === null) {
    throw new RelayError("conflict", "This app has no template upgrade to revert (none applied, or the last one was reverted already).", { app_id: app.id, revert_available: false });
  }
  const old = await getVersion(env, app.id, install.previousAppVersion);
  const document = old ? await getBlob(env.BLOBS, "doc", old.documentSha256) : null;
  if (!old || !document) throw new RelayError("conflict", "The version before the last upgrade is no longer stored.", { previous_version_id: install.previousAppVersion });
  const manifest = JSON.parse(old.manifestJson) as unknown;
  const judged = await judge(env, app, manifest);
  if (judged.compat === "incompatible") refuseStranding(judged.strandings, "Going back");
  const result = await redeployApp(env, actor, app, {
    html: await document.text(), manifest, assets: await storedAssets(env, JSON.parse(old.assetsJson) as AssetEntry[]), force: true,
  });
  await db(env).update(templateInstalls).set({
    snapshotId: install.previousSnapshotId ?? install.snapshotId, templateVersion: install.previousTemplateVersion ?? install.templateVersion,
    previousAppVersion: null, previousSnapshotId: null, previousTemplateVersion: null,
  }).where(eq(templateInstalls.id, install.id));
  return { version_id: (result.body as Record<string, unknown>).version as number, template_version: install.previousTemplateVersion };
}
