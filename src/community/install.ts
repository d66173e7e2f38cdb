/**
 * Installing a community template (WIRE §2.10): the config contract by `<handle>/<slug>` or
 * snapshot id, and the install itself. An install always creates a new app for the
 * caller's human through the ordinary create path (createApp: same checks, quotas, seed
 * transaction), carrying the snapshot's document, manifest, assets and example rows, plus
 * the config answers as the `install-config` row of the settings collection. Every answer
 * is checked first (steps, choices, uploads the caller owns), so a refusal creates
 * nothing. Uploaded files are re-pointed from the agent to the new app.
 */
import { and, eq, inArray, isNull } from "drizzle-orm";
import { RelayError } from "../errors";
import { config } from "../config";
import { db } from "../db/client";
import { attachments } from "../db/attachments-schema";
import { templateInstalls } from "../db/community-installs-schema";
import { attachmentById } from "../blobs/attachments";
import { createApp, type DeployActor } from "../apps/deploy";
import type { AssetInput } from "../apps/assets";
import type { AssetEntry } from "../db/apps";
import { getBlob } from "../blobs/store";
import { newId, nowIso } from "../auth/tokens";
import { isListed, latestApprovedSnapshot, snapshotById, snapshotContent, snapshotDocument, type SeedRows, type SnapshotRow } from "./snapshots";
import { checkAnswers, configSteps, connectSteps, INSTALL_CONFIG_KEY, type CheckedAnswers } from "./config-contract";
import { countTemplateEvent } from "./stats";

/** `<handle>/<slug>` as two path segments, or a snapshot id. */
export type TemplateRef = { handle: string; slug: string } | { snapshotId: string };

function refText(ref: TemplateRef): string {
  return "snapshotId" in ref ? ref.snapshotId : `${ref.handle}/${ref.slug}`;
}

/** The approved, still-listed snapshot a reference names, else `template_not_found`. */
export async function listedSnapshot(env: Env, ref: TemplateRef): Promise<SnapshotRow> {
  const snapshot = "snapshotId" in ref ? await snapshotById(env, ref.snapshotId) : await latestApprovedSnapshot(env, ref.handle, ref.slug);
  if (!snapshot || !isListed(snapshot)) {
    throw new RelayError("template_not_found", `No approved template "${refText(ref).slice(0, 120)}" is listed.`, { template: refText(ref).slice(0, 120) });
  }
  return snapshot;
}

export function configContract(snapshot: SnapshotRow) {
  const content = snapshotContent(snapshot);
  return {
    snapshot_id: snapshot.id, name: snapshot.name, slug: snapshot.slug, settings_collection: snapshot.settingsCollection,
    config_steps: configSteps(content.setupSteps), connect_steps: connectSteps(content.setupSteps, content.manifest),
  };
}

/** The contract a caller fetched counts as a try on the publisher's analytics. */
export async function fetchConfigContract(env: Env, ref: TemplateRef, region = "") {
  const snapshot = await listedSnapshot(env, ref);
  await countTemplateEvent(env, snapshot, { tries: 1 }, region);
  return configContract(snapshot);
}

/** The caller agent's own ready, agent-scoped uploads named by upload steps, and that they fit one app. */
async function checkUploads(env: Env, agentId: string, uploads: CheckedAnswers["uploads"]): Promise<string[]> {
  let total = 0;
  for (const { key, attachmentId } of uploads) {
    const row = await attachmentById(env, attachmentId);
    if (!row || row.deletedAt !== null || row.status !== "ready" || row.scope !== "agent" || row.ownerAgentId !== agentId) {
      throw new RelayError("attachment_not_found", `Config step "${key}" names attachment "${attachmentId.slice(0, 100)}", which is not an upload of yours.`, { field: `config.${key}`, attachment_id: attachmentId.slice(0, 100) });
    }
    total += row.size;
  }
  const cap = config(env).limits.MAX_BLOBS_PER_APP_BYTES;
  if (total > cap) throw new RelayError("quota_exceeded", `The uploads come to ${total} bytes; an app holds at most ${cap}.`, { scope: "app", size: total, limit: cap });
  return uploads.map((u) => u.attachmentId);
}

/** The snapshot's stored asset files as deploy input (bytes read back from the content-addressed store). */
export async function storedAssets(env: Env, index: AssetEntry[]): Promise<AssetInput[]> {
  return Promise.all(index.map(async (entry) => {
    const blob = await getBlob(env.BLOBS, "asset", entry.sha256);
    if (!blob) throw new RelayError("internal_error", `Asset ${entry.path} of the template is missing from storage.`);
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { path: entry.path, content_base64: btoa(binary), mime: entry.mime };
  }));
}

/** The example rows plus the settings row holding the answers (over any example settings row). */
function seedWithSettings(seedRows: SeedRows, settingsCollection: string | null, values: Record<string, string>): SeedRows {
  const out: SeedRows = Object.fromEntries(Object.entries(seedRows).map(([name, rows]) => [name, [...rows]]));
  if (Object.keys(values).length === 0) return out;
  if (!settingsCollection) {
    throw new RelayError("invalid_request", "This template declares no settings collection to keep config answers in; install it without config.", { field: "config" });
  }
  const rows = out[settingsCollection] ?? [];
  const example = rows.find((row) => row.key === INSTALL_CONFIG_KEY);
  const data = { ...(example && typeof example.data === "object" && example.data !== null ? example.data : {}), ...values };
  out[settingsCollection] = [...rows.filter((row) => row.key !== INSTALL_CONFIG_KEY), { key: INSTALL_CONFIG_KEY, data }];
  return out;
}

export async function installTemplate(env: Env, actor: DeployActor, ref: TemplateRef, answers: Record<string, string>, region = ""): Promise<{ app_id: string; slug: string; url: string }> {
  if (!actor.ownerHumanId) {
    throw new RelayError("agent_not_claimed", "This agent has no human yet; an install creates an app for the agent's human.");
  }
  const snapshot = await listedSnapshot(env, ref);
  const content = snapshotContent(snapshot);
  const checked = checkAnswers(configSteps(content.setupSteps), answers);
  const uploadIds = await checkUploads(env, actor.agentId, checked.uploads);
  const inputData = seedWithSettings(content.seedRows, snapshot.settingsCollection, checked.values);
  const html = await snapshotDocument(env, snapshot);
  const created = await createApp(env, actor, {
    html, manifest: content.manifest, assets: await storedAssets(env, content.assets), visibility: "private",
    ...(Object.keys(inputData).length ? { input_data: inputData } : {}),
  });
  if (created.dryRun) throw new RelayError("internal_error", "An install is never a dry run.");
  const appId = created.body.app_id as string;
  if (uploadIds.length) {
    await db(env).update(attachments).set({ scope: "app", appId })
      .where(and(inArray(attachments.id, uploadIds), eq(attachments.ownerAgentId, actor.agentId), eq(attachments.scope, "agent"), isNull(attachments.deletedAt)));
  }
  await db(env).insert(templateInstalls).values({
    id: newId("inst_"), appId, installedSnapshotId: snapshot.id, snapshotId: snapshot.id, templateVersion: snapshot.version,
    publisherHumanId: snapshot.publisherHumanId, templateSlug: snapshot.slug, installerHumanId: actor.ownerHumanId, installerAgentId: actor.agentId,
    previousAppVersion: null, previousSnapshotId: null, previousTemplateVersion: null, lastUpgradedAt: null, createdAt: nowIso(),
  });
  await countTemplateEvent(env, snapshot, { tries: 1, installs: 1 }, region);
  return { app_id: appId, slug: created.body.slug as string, url: created.body.url as string };
}
