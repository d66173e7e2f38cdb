/**
 * Template upgrades of an installed app (spec B "Template upgrades"; WIRE §2.2 and
 * TemplateUpgradePreview §2.14): is a newer approved version of the template listed, what
 * would it change, apply it, or go back to the version before the last upgrade.
 *
 * Both directions go through the ordinary redeploy (redeployApp: a new app version, the
 * unique-index check against live rows), judged first by upgrade-judgement.ts against the
 * live version and rows: a version that would leave a live row without a home is refused
 * outright; one that only widens what the app may do or show needs the owner's explicit
 * acceptance (`accept_permissions`). An `expect_version` pin refuses when the offer moved
 * since the owner looked.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { templateInstalls } from "../db/community-installs-schema";
import { templateSnapshots } from "../db/community-schema";
import { getVersion, type AppRow, type AssetEntry } from "../db/apps";
import { redeployApp, type DeployActor } from "../apps/deploy";
import type { CompatBreak } from "../manifest";
import { judge, needsAcceptance, NO_PERMISSIONS } from "./upgrade-judgement";
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
