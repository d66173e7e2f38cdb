/**
 * The error catalogue: the one place every error code the relay can answer with is
 * defined, with its HTTP status, whether a retry can help, and a hint that tells the
 * caller what to do next. Routes throw `RelayError`; the single `onError` renders the
 * envelope of CONTRACT §5. `/docs/errors` and the OpenAPI document are generated from it,
 * and the CLI prints the same codes, so a code means one thing everywhere.
 */

export interface CatalogueEntry {
  status: number;
  /** Only `rate_limited` and `ingest_write_unavailable` may be retried as they are. */
  retryable: boolean;
  /** One sentence: the caller's next step. */
  hint: string;
  /** What the code means, for the docs page. */
  meaning: string;
}

function entry(status: number, meaning: string, hint: string, retryable = false): CatalogueEntry {
  return { status, meaning, hint, retryable };
}

export const catalogue = {
  // --- spec B, in its order ---
  account_quota_exceeded: entry(409, "A per-account cap (apps, rows, attachments) is reached.", "Delete or purge something you no longer need, or ask the operator for a higher limit."),
  agent_not_claimed: entry(403, "The agent has not been claimed by a human yet.", "Ask your human for a claim code (console → Mint a claim code) and run `service agent claim <code>` (see /skills/service/references/registering.md)."),
  app_not_found: entry(404, "No app with that id or slug is visible to you.", "Check the id or slug with `service apps list`; apps of other owners are never shown."),
  app_quota_exceeded: entry(409, "The app's row or storage quota is reached.", "Delete rows or lower retention, then try again."),
  append_only: entry(403, "The collection is append-only: rows cannot be updated or deleted.", "Write a new row instead, or purge as the owner."),
  attachment_not_found: entry(404, "The attachment id is wrong, deleted, or owned by another agent.", "List your attachments with `service attachment list` (who may use which file: /skills/service/references/attachments.md)."),
  attachment_ref_not_accessible: entry(422, "The payload references attachments you do not own or that are deleted.", "Reference only attachments listed by `service attachment list` (see /skills/service/references/attachments.md)."),
  attachment_size_exceeded: entry(413, "The attachment is over the per-attachment cap.", "Compress or split the file (the caps by type: /skills/service/references/attachments.md)."),
  attachment_token_invalid: entry(401, "The capability token is unknown, expired, revoked or spent.", "Ask the attachment's owner for a fresh link."),
  attachment_token_not_found: entry(404, "The token id is wrong or belongs to another attachment.", "List the attachment's tokens to find the right id."),
  author_not_allowed: entry(403, "Only the row's author may do this.", "Act on rows you wrote, or ask the author."),
  capability_invalid: entry(400, "A `capabilities` entry is unknown or duplicated.", "Use each allowed capability name at most once (see /docs/manifest#origins-and-browser-features)."),
  cli_upgrade_required: entry(426, "The client is older than the relay's minimum version.", "Upgrade the service CLI to at least details.min_version."),
  collection_count_forbidden: entry(403, "Counting is not permitted by the collection's countRead list.", "Ask the app's agent to add you to countRead, or list the rows you can read."),
  collection_delete_forbidden: entry(403, "You may read this row but are not in the collection's delete list.", "Ask the owner for a role that may delete."),
  collection_name_invalid: entry(400, "A collection name breaks the naming rule.", "Start with a lowercase letter, then lowercase letters, digits, _ or -, at most 64 characters (see /docs/manifest#collections)."),
  collection_not_found: entry(404, "The app declares no collection of that name.", "Check the manifest's collections."),
  collection_read_forbidden: entry(403, "You are not in the collection's read list.", "Ask the owner for a role that may read."),
  collection_schema_invalid: entry(400, "A collection schema is not a valid $ref into the manifest's $defs.", "Point `schema` at `{\"$ref\": \"#/$defs/<Name>\"}` and define it under root $defs (see /docs/manifest#row-schema)."),
  collection_write_forbidden: entry(403, "You are not in the list that governs this write.", "Ask the owner for a role that may write, or write only your own rows."),
  community_publish_disabled: entry(403, "Publishing templates is turned off on this relay.", "Use a relay that allows publishing."),
  conflict: entry(409, "The request conflicts with the current state (for example an if_match mismatch).", "Re-read the resource (details.current when present) and retry against the new version."),
  connection_invalid: entry(400, "A connection field is invalid.", "Fix the field named in details and try again."),
  connection_limit_reached: entry(409, "The app has the maximum number of connections.", "Delete a connection you no longer need."),
  connection_not_found: entry(404, "The app has no connection of that name.", "List connections with `service connections list <app>`."),
  consent_owner_only: entry(403, "Only the app's owner can give consent.", "Ask the owner to open the consent link in their browser."),
  csrf_origin_mismatch: entry(403, "The request's Origin or Referer does not match the relay's origin.", "Send browser requests from the relay's own pages; agents should use their API key instead of a cookie."),
  custom_domains_not_enabled: entry(501, "This relay has no custom-domain support configured.", "Use the app's default URL."),
  domain_exists: entry(409, "The app already has a custom domain.", "Remove the current domain first."),
  domain_invalid: entry(400, "Not a bare, valid DNS name you control.", "Use a plain host name such as app.example.com: no scheme, IP, wildcard or platform domain."),
  domain_not_found: entry(404, "The app has no custom domain.", "Add one first."),
  domain_taken: entry(409, "The domain is bound to another app.", "Remove it from the other app first."),
  email_not_verified: entry(403, "The account's email address is not verified.", "Sign in through the emailed link to verify it."),
  embed_invalid: entry(400, "An `embeds` entry is invalid.", "Use https origins such as https://www.youtube.com (see /docs/manifest#origins-and-browser-features)."),
  external_host_invalid: entry(400, "An `externalHosts` entry is invalid.", "Use https origins without paths, userinfo or wildcards below the registrable domain (see /docs/manifest#origins-and-browser-features)."),
  forbidden: entry(403, "Your identity may not perform this action.", "Use a credential that owns the resource."),
  gone: entry(410, "The resource is closed or expired.", "Start again with a fresh resource."),
  grant_invalid: entry(401, "The session grant is missing, used, expired or for another app.", "Open a fresh grant link."),
  ingest_invalid: entry(400, "An ingest rule is malformed.", "Fix the rule named in details (see /docs/manifest#ingest and /skills/service/references/ingest.md)."),
  ingest_not_found: entry(404, "Wrong hook URL, bad secret, or disabled hook.", "Copy the hook URL again from `service ingest list --app <app>` (see /skills/service/references/ingest.md)."),
  ingest_payload_too_large: entry(413, "The body is over INGEST_MAX_BODY_BYTES.", "Send smaller deliveries."),
  ingest_signature_invalid: entry(401, "The signature is missing, malformed or wrong, or no signing secret is set yet.", "Sign the raw body with the hook's signing secret (see /skills/service/references/ingest.md)."),
  ingest_unsupported_media_type: entry(415, "Inbound hooks accept only application/json.", "Send Content-Type: application/json."),
  ingest_write_unavailable: entry(503, "The app is at its quota; the delivery was journaled as failed.", "Retry later; the owner must free space first.", true),
  input_schema_violation: entry(422, "The initial input_data fails a collection schema.", "Fix the rows at the paths listed in details; they must match the collection schemas (see /docs/manifest#row-schema)."),
  invalid_request: entry(400, "The body or parameters are malformed.", "Fix the field named in details and send the request again; /v1/openapi.json describes every route."),
  manifest_incompatible_redeploy: entry(422, "The redeploy would strand rows or widen disclosure.", "Review details.breaks (see /docs/manifest#redeploying-the-compatibility-gate); redeploy with force=true only if the human agreed."),
  manifest_invalid: entry(400, "The manifest's shape is wrong.", "Fix the spot details.path names (\"\" is the manifest as a whole); the manifest guide is at /docs/manifest."),
  manifest_too_large: entry(413, "The manifest is over MAX_MANIFEST_BYTES, or a row schema over MAX_SCHEMA_BYTES.", "Trim the manifest or its schemas (see /docs/manifest#limits)."),
  method_not_allowed: entry(405, "The route does not support this HTTP method.", "Use one of the methods in the Allow header."),
  mime_disallowed: entry(415, "The file's sniffed type is not allowed.", "Upload a file of an allowed type (see /skills/service/references/attachments.md)."),
  mime_mismatch: entry(415, "The declared Content-Type differs from the sniffed type.", "Declare the file's real type, or leave it out and let the relay read it from the bytes (see /skills/service/references/attachments.md)."),
  not_a_reviewer: entry(403, "Only reviewers may do this.", "Operator routes take the key of an agent whose human's email is on the relay's COMMUNITY_REVIEW_OPERATOR_EMAILS."),
  not_found: entry(404, "Nothing exists at this path.", "Check the path against /v1/openapi.json; /docs lists every page of documentation."),
  not_implemented: entry(501, "This relay does not offer that capability.", "Use a relay that offers it."),
  notify_invalid: entry(400, "A notify rule is malformed.", "Fix the rule named in details (see /docs/manifest#notify and /skills/service/references/notify-targets.md)."),
  notify_submitter_not_enabled: entry(400, "The `submitter` target needs external sending, which this relay has off.", "Notify owner, members or roles instead (see /skills/service/references/notify-targets.md)."),
  participant_token_invalid: entry(401, "The participant token is unknown, malformed or revoked.", "Join again to get a fresh token."),
  payload_too_large: entry(413, "The request body is over the size cap for this route.", "Send a smaller body; details.limit gives the cap in bytes."),
  permission_role_invalid: entry(400, "A permission list is invalid under the manifest rules.", "Use owner, member, anyone, declared roles and the row-scoped subjects where allowed (see /docs/manifest#permission-lists)."),
  purge_forbidden: entry(403, "Only the owner or the owning agent may purge.", "Ask the owner."),
  quota_exceeded: entry(413, "The attachment quota for this scope is full.", "Delete attachments you no longer need."),
  rate_limited: entry(429, "Too many requests: a per-address limiter's window, or an owner's daily cap on invitation mail, is full.", "Wait for the Retry-After seconds, then retry.", true),
  resync_required: entry(410, "The feed cursor is below the retention floor, or past the newest entry.", "Re-list each collection and resume from the newest cursor (details.head on the long-poll)."),
  row_not_found: entry(404, "No live row at that key is visible to you.", "Check the key; rows your read list hides are never shown."),
  row_schema_violation: entry(422, "The row's data fails the collection schema; nothing was written.", "Fix the fields at the paths listed in details (the collection's row schema: see /docs/manifest#row-schema)."),
  schedule_invalid: entry(400, "A schedules rule is malformed.", "Fix the rule named in details (see /docs/manifest#schedules)."),
  schema_incompatible_upgrade: entry(422, "The template upgrade narrows a schema.", "Upgrade with compat=force only if the human agreed."),
  schema_violation: entry(422, "The event or row fails the declared schema.", "Fix the fields listed in details."),
  slug_not_allowed_for_link: entry(400, "Link-visibility apps get a server-generated slug.", "Drop `slug`, or choose visibility private or public."),
  slug_taken: entry(409, "The slug is in use.", "Choose another slug."),
  soft_deleted: entry(410, "The entity is in the trash.", "Restore it first, or read with ?include_deleted=true."),
  too_many_collections: entry(400, "The manifest declares more than MAX_COLLECTIONS_PER_APP collections.", "Merge collections (see /docs/manifest#limits)."),
  too_many_embeds: entry(400, "More than MAX_EMBEDS embeds.", "Remove embeds you do not need (see /docs/manifest#limits)."),
  too_many_external_hosts: entry(400, "More than MAX_EXTERNAL_HOSTS external hosts.", "Remove hosts you do not need (see /docs/manifest#limits)."),
  // --- spec B's unnamed entries, named by us (docs/decisions/2026-11-22-error-names.md) ---
  agent_task_invalid: entry(400, "An agentTasks rule is malformed.", "Fix the rule named in details: on, a declared collection, taskType, prompt, declared reads and writes (see /docs/manifest#agenttasks and /skills/service/references/agent-tasks.md)."),
  anon_write_budget_exceeded: entry(409, "The collection's anonymous write budget is spent; details.scope says which.", "Try again tomorrow, or sign in."),
  credential_scope_forbidden: entry(403, "The service credential's allowlist does not cover this operation.", "Mint a credential whose grants name this collection and operation."),
  notify_channel_not_enabled: entry(400, "The notify channel is not available here (inapp, or push on a non-public app).", "Use the email channel (see /skills/service/references/notify-targets.md)."),
  relation_set_forbidden: entry(403, "A writer-set field may be changed only by the row's creator.", "Leave the field unchanged."),
  turnstile_required: entry(403, "The collection needs a bot-challenge token and none was sent.", "Solve the challenge in the page and send its token (see /docs/page-script#bot-challenge-antiabuse-collections)."),
  turnstile_verification_failed: entry(403, "The bot-challenge token was rejected (expired, used or wrong site key).", "Solve the challenge again."),
  unauthorized: entry(401, "The request needs a credential and carried none that this route accepts.", "Send `Authorization: Bearer <api-key>` (agents) or sign in (people)."),
  unique_backfill_conflict: entry(409, "Live rows already share a value of the field being made unique.", "Make the values distinct before adding unique."),
  unique_conflict: entry(409, "A row with this unique value already exists.", "Upsert on the unique field instead of creating."),
  event_type_not_declared: entry(422, "The event type is not declared by the schema.", "Declare it first."),
  upload_forbidden: entry(403, "Your identity may not upload to this app.", "Ask the owner."),
  webhook_invalid: entry(400, "A webhooks rule is malformed.", "Fix the rule named in details: on, a declared collection, an https url without userinfo (see /docs/manifest#webhooks and /skills/service/references/webhooks.md)."),
  push_not_available: entry(409, "Browser push needs a public app whose manifest sets offline: true, on a relay with NOTIFY_PUSH_ENABLED.", "Ask the app's agent to set offline: true and make the app public (see /docs/page-script#servicepush-browser-push)."),
  connection_status_forbidden: entry(403, "Only the owner or the owning agent may set or read a connection's status.", "Ask the owner."),
  // --- WIRE §1.3 additions ---
  restore_conflict: entry(409, "A live row already holds that key or unique value.", "Delete or change the live row first."),
  restore_expired: entry(410, "The row's 30-day restore window has passed.", "The row cannot be restored."),
  server_set_field_supplied: entry(422, "The request supplied a field the server sets.", "Leave server-set fields out."),
  server_set_source_missing: entry(422, "The server could not fill a server-set field.", "Check the field's source."),
  row_size_exceeded: entry(413, "The row's data is over the row byte cap.", "Store less per row, or put large content in attachments."),
  document_size_exceeded: entry(413, "The HTML document is over the size cap.", "Move large content into assets."),
  agent_already_claimed: entry(409, "This agent is already bound to a human; binding is one-way.", "Nothing to do: the agent keeps working for its human."),
  auth_provider_unavailable: entry(503, "The identity provider is not available.", "Use the magic-link sign-in."),
  invalid_api_key: entry(401, "The API key is unknown, revoked or paused.", "Register again with `service agent register`, or ask your human to resume the key."),
  // --- the agent task queue (this relay, WIRE §2.8) ---
  task_not_found: entry(404, "No agent task with that id belongs to an app of yours.", "Use the task_id of an envelope your claim returned (see /skills/service/references/agent-tasks.md)."),
  task_not_leased: entry(409, "The task is not leased any more: its lease lapsed (it went back to the queue) or it was acked or nacked already.", "Drop this task; claim again to get a fresh lease (details.status says where the task is; see /skills/service/references/agent-tasks.md)."),
  // --- attachments (this relay, WIRE §2.9) ---
  attachment_expansion_exceeded: entry(413, "The file expands far past the attachment caps once opened (a zip's entries, or an image's declared pixels).", "Upload the contents you need, or a smaller image (see /skills/service/references/attachments.md)."),
  attachment_checksum_mismatch: entry(422, "The uploaded bytes do not match the size or sha256 given at presign; the attachment stays pending.", "Upload the exact bytes you presigned again, or presign anew (see /skills/service/references/attachments.md)."),
  attachment_not_uploaded: entry(409, "Nothing was uploaded to the presigned URL yet.", "PUT the bytes to upload_url first, then confirm."),
  upload_url_invalid: entry(401, "The upload URL is unknown, expired or already used.", "Presign again for a fresh upload URL."),
  attachment_fetch_failed: entry(422, "The relay could not fetch the source URL (refused target, no answer, non-2xx, redirect, or over the size cap).", "Give a public https URL that answers 200 with the file, or upload the bytes yourself (see /skills/service/references/attachments.md)."),
  image_undecodable: entry(422, "The bytes say they are an image, but they do not decode (or an SVG does not rasterise), so no clean copy without metadata can be stored.", "Upload the image again from the original file, or export it anew (an SVG as PNG)."),
  // --- the MCP endpoint (this relay, WIRE-MCP §1.4) ---
  invalid_args: entry(400, "A tool's arguments are missing, mistyped, unknown, or wrong for the action named.", "Read the tool's input schema in tools/list and send only the fields the action needs."),
  oauth_request_invalid: entry(400, "The MCP client's authorization request cannot be approved here: unknown client, unregistered redirect URI, no PKCE S256, or an approval page that expired, was already used or was opened in another browser.", "Start the connection again from your MCP client."),
  oauth_token_invalid: entry(401, "The OAuth access token is unknown, expired or revoked, or the agent it acts as was paused or had its keys revoked.", "Let your MCP client refresh the token or authorize again; the person approves on the relay's page."),
  // --- community installs, upgrades and reviews (this relay, WIRE §2.10) ---
  template_not_found: entry(404, "No approved, listed template has that <handle>/<slug> or snapshot id (pending, rejected and unpublished ones are not installable).", "Check the reference in the gallery; a template its publisher took down cannot be installed."),
  review_not_found: entry(404, "No review has that id (or it was removed).", "Use the id a review answer gave you."),
  // --- community publishing and operator review (this relay, WIRE §2.10) ---
  template_not_publishable: entry(422, "The app declares something a template may not carry: a webhook with a literal url, a non-empty embedAncestors, or agentTasks.", "Move webhook targets to urlFromSetting, drop embedAncestors and agentTasks from the manifest, redeploy, then publish again (see /docs/community)."),
  template_version_not_newer: entry(409, "A template of that slug already has this version or a later one; a republish must carry a strictly greater semver.", "Publish with a version above details.latest."),
  submission_not_found: entry(404, "No submission has that snapshot id (or it is not yours to change).", "Use the snapshot_id a publish answered, or list the queue with `service template list-pending`."),
  handle_taken: entry(409, "Another publisher holds that handle.", "Choose another handle."),
  handle_already_claimed: entry(409, "Your publisher handle is already claimed; handles are permanent.", "Keep the handle you have (`service publisher show`)."),
  publisher_not_found: entry(404, "No publisher has claimed that handle.", "Check the handle; it is the part before / in <handle>/<slug>."),
  // --- app export and import (this relay, docs/export-import.md) ---
  import_archive_invalid: entry(400, "The body is not a complete app export: not a tar archive, truncated, an entry that does not belong, a damaged header, or an export.json or SHA256SUMS that does not read.", "Send the file `service apps export` wrote, whole and unchanged (see /docs/export-import)."),
  import_archive_too_large: entry(413, "The archive, or one entry in it, is over the size the relay imports.", "details.limit gives the cap in bytes; trim the app (rows, attachments) and export it again (see /docs/export-import)."),
  import_checksum_mismatch: entry(422, "An entry's bytes do not match the sha256 (or size) SHA256SUMS lists for it, or an entry is missing or unlisted: the archive was changed or damaged.", "Export the app again and import that file unchanged (see /docs/export-import)."),
  // --- identity flows (this relay) ---
  claim_code_invalid: entry(400, "The claim code is unknown, expired or already used.", "Ask your human to mint a new claim code; codes last 15 minutes and work once (see /skills/service/references/registering.md)."),
  device_code_invalid: entry(400, "The device code is unknown.", "Start again with `service agent register`."),
  // --- the skill's reference sections (this relay, WIRE §2.11) ---
  skill_reference_not_found: entry(404, "The skill has no reference section with that slug.", "GET /skills/service/references lists every section with its slug and address."),
  idp_state_invalid: entry(400, "The identity provider sent back a sign-in this browser did not start here: its state is missing, unknown, expired, already used, or from another browser.", "Start again from the sign-in page; an attempt lasts ten minutes and works once."),
  idp_access_denied: entry(403, "The sign-in was declined at the identity provider.", "Sign in again and allow the relay, or use the emailed link."),
  idp_token_invalid: entry(401, "The identity provider's answer did not hold: the code was refused, or the ID token failed a check (issuer, audience, nonce, expiry or signature).", "Start again from the sign-in page; if it keeps failing, tell the relay's operator."),
  internal_error: entry(500, "The relay failed on its side; nothing you sent caused it.", "Try again shortly; if it persists, file feedback with the request's time."),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;

/**
 * Codes the catalogue already lists (spec B and WIRE name them, and `/docs/errors` shows
 * them) that no code path answers with yet, each with what will answer it. A test keeps
 * this list honest: every other code is thrown somewhere, and a code that starts being
 * thrown must leave the list.
 */
export const AWAITING_FEATURE: Partial<Record<ErrorCode, string>> = {
  event_type_not_declared: "inbound hooks (declared event types)",
  schema_violation: "inbound hooks (event payloads)",
  participant_token_invalid: "participant tokens",
  author_not_allowed: "author-only row actions",
};

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(catalogue, code);
}

/** A failure the caller can act on. Anything else thrown is a bug, rendered as a bare 500. */
export class RelayError extends Error {
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message ?? catalogue[code].meaning);
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return catalogue[this.code].status;
  }
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    hint: string;
    retryable: boolean;
    docs_url: string;
    details?: Record<string, unknown>;
  };
}

export function errorBody(err: RelayError, apiOrigin: string): ErrorBody {
  const meta = catalogue[err.code];
  return {
    error: {
      code: err.code,
      message: err.message,
      hint: meta.hint,
      retryable: meta.retryable,
      docs_url: `${apiOrigin}/docs/errors#${err.code}`,
      ...(err.details ? { details: err.details } : {}),
    },
  };
}
