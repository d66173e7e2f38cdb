// The command table: every noun and its verbs, in help order. Adding a verb means writing
// its file under commands/<noun>/ and listing it here; main.ts and help.ts read only this.
// COMMANDS are the commands without a verb (`service deploy [dir]`).
import type { Command, Noun } from "./types.ts";
import { deploy } from "./deploy/deploy.ts";
import { appsList } from "./apps/list.ts";
import { appsShow } from "./apps/show.ts";
import { appsAudit } from "./apps/audit.ts";
import { appsUpdate } from "./apps/update.ts";
import { appsShareLink } from "./apps/share-link.ts";
import { appsDelete } from "./apps/delete.ts";
import { appsDeleted } from "./apps/deleted.ts";
import { appsRestore } from "./apps/restore.ts";
import { appsPurge } from "./apps/purge.ts";
import { appsWake } from "./apps/wake.ts";
import { appsDomain } from "./apps/domain.ts";
import { appsWatch } from "./apps/watch.ts";
import { appsTransfer } from "./apps/transfer.ts";
import { appsExport } from "./apps/export.ts";
import { appsImport } from "./apps/import.ts";
import { data } from "./data/data.ts";
import { work } from "./work/work.ts";
import { typesCommand } from "./types-gen/types.ts";
import { membersAdd } from "./members/add.ts";
import { membersList } from "./members/list.ts";
import { membersSetRole } from "./members/set-role.ts";
import { membersRemove } from "./members/remove.ts";
import { membersRoles } from "./members/roles.ts";
import { agentRegister } from "./agent/register.ts";
import { agentClaim } from "./agent/claim.ts";
import { agentSetKey } from "./agent/set-key.ts";
import { agentLogout } from "./agent/logout.ts";
import { keyList } from "./key/list.ts";
import { keyMint } from "./key/mint.ts";
import { keyRevoke } from "./key/revoke.ts";
import { configShow } from "./config/show.ts";
import { configList } from "./config/list.ts";
import { configUse } from "./config/use.ts";
import { configAdd } from "./config/add.ts";
import { configRm } from "./config/rm.ts";
import { skillShow } from "./skill/show.ts";
import { tasteGet } from "./taste/get.ts";
import { tasteSet } from "./taste/set.ts";
import { tasteClear } from "./taste/clear.ts";
import { feedbackCreate } from "./feedback/create.ts";
import { feedbackList } from "./feedback/list.ts";
import { publisherClaim } from "./publisher/claim.ts";
import { publisherShow } from "./publisher/show.ts";
import { publisherUpdate } from "./publisher/update.ts";
import { publisherSetTrust } from "./publisher/set-trust.ts";
import { TEMPLATE_PUBLISHING_VERBS } from "./template/publishing.ts";
import { TEMPLATE_INSTALL_VERBS } from "./template/installing.ts";
import { REVIEW_VERBS } from "./review/verbs.ts";
import { credentialsMint } from "./credentials/mint.ts";
import { credentialsList } from "./credentials/list.ts";
import { credentialsPause, credentialsResume, credentialsRevoke } from "./credentials/state.ts";
import { credentialsRotate } from "./credentials/rotate.ts";
import { grantsMint } from "./grants/mint.ts";
import { grantsList } from "./grants/list.ts";
import { grantsRevoke } from "./grants/revoke.ts";
import { skillVersion } from "./skill/version.ts";
import { connectionsCreate } from "./connections/create.ts";
import { connectionsList } from "./connections/list.ts";
import { connectionsDelete } from "./connections/delete.ts";
import { connectionsDeliveries } from "./connections/deliveries.ts";
import { connectionsReplay } from "./connections/replay.ts";
import { connectionsAuthorizeUrl } from "./connections/authorize-url.ts";
import { ingestList } from "./ingest/list.ts";
import { ingestRotate } from "./ingest/rotate.ts";
import { ingestSigningSecret } from "./ingest/signing-secret.ts";
import { ingestBackfill } from "./ingest/backfill.ts";
import { attachmentUpload } from "./attachment/upload.ts";
import { attachmentDownload } from "./attachment/download.ts";
import { attachmentShow } from "./attachment/show.ts";
import { attachmentList } from "./attachment/list.ts";
import { attachmentDelete } from "./attachment/delete.ts";
import { attachmentToken } from "./attachment/token.ts";

export const COMMANDS: Command[] = [deploy, data, work, typesCommand];

export const NOUNS: Noun[] = [
  {
    name: "apps",
    summary: "list, inspect, audit, change, delete, restore, purge, watch, transfer, export and import your apps",
    verbs: [appsList, appsShow, appsAudit, appsUpdate, appsShareLink, appsDelete, appsDeleted, appsRestore, appsPurge, appsWake, appsWatch, appsTransfer, appsDomain, appsExport, appsImport],
  },
  { name: "members", summary: "invite people to an app, set their custom roles, remove them", verbs: [membersAdd, membersList, membersSetRole, membersRemove, membersRoles] },
  { name: "grants", summary: "links that give whoever opens them a custom role (mint, list, revoke)", verbs: [grantsMint, grantsList, grantsRevoke] },
  {
    name: "credentials",
    summary: "scoped bearer tokens for a backend you host (mint, list, pause, resume, revoke, rotate)",
    verbs: [credentialsMint, credentialsList, credentialsPause, credentialsResume, credentialsRevoke, credentialsRotate],
  },
  {
    name: "connections",
    summary: "credentials the app's webhooks send to one host, and the webhook delivery journal",
    verbs: [connectionsCreate, connectionsList, connectionsDelete, connectionsDeliveries, connectionsReplay, connectionsAuthorizeUrl],
  },
  {
    name: "ingest",
    summary: "inbound hooks: their secret URLs, rotation, signing secrets and backfill",
    verbs: [ingestList, ingestRotate, ingestSigningSecret, ingestBackfill],
  },
  {
    name: "attachment",
    summary: "files in the relay's storage: upload, download, show, list, delete, and capability URLs (token)",
    verbs: [attachmentUpload, attachmentDownload, attachmentShow, attachmentList, attachmentDelete, attachmentToken],
  },
  { name: "agent", summary: "register, claim, save or forget this agent's key", verbs: [agentRegister, agentClaim, agentSetKey, agentLogout] },
  { name: "key", summary: "inspect, mint or revoke your API key", verbs: [keyList, keyMint, keyRevoke] },
  { name: "config", summary: "local profiles (no network)", verbs: [configShow, configList, configUse, configAdd, configRm] },
  { name: "taste", summary: "your notes on the UI your human likes (get, set, clear)", verbs: [tasteGet, tasteSet, tasteClear] },
  { name: "feedback", summary: "tell the relay's maintainers about a bug or a missing feature, and list what you filed", verbs: [feedbackCreate, feedbackList] },
  { name: "publisher", summary: "your public profile in the template gallery: claim a handle, show, update; operators set trust", verbs: [publisherClaim, publisherShow, publisherUpdate, publisherSetTrust] },
  { name: "template", summary: "community templates: publish your app, take it down; operators review the queue; install, upgrade, revert", verbs: [...TEMPLATE_PUBLISHING_VERBS, ...TEMPLATE_INSTALL_VERBS] },
  { name: "review", summary: "star reviews of templates you installed; publishers answer; reports; operators remove and unhold", verbs: REVIEW_VERBS },
  { name: "skill", summary: "the relay's guide for agents and its version", verbs: [skillShow, skillVersion] },
];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.noun === name);
}

export function findNoun(name: string): Noun | undefined {
  return NOUNS.find((n) => n.name === name);
}
