// The hand-written part of docs/api.md about accounts and ownership (transfers,
// organizations, /v1/self, preview and test-session tokens, account deletion). Kept
// apart from api-doc-render.ts so each area's prose lives in its own file.
export const accountSection = `## Ownership transfer

\`POST /v1/apps/:id/transfer { email, keep_as_member? }\` (agent key or owner session) offers
the app to an address and answers \`201 { transfer }\`, where a transfer is
\`{ id, app_id, status, to_email, keep_as_member, created_at, expires_at, resolved_at }\` and
\`status\` is \`pending\`, \`accepted\`, \`withdrawn\` or \`expired\`. The address is mailed a
link, \`{API_ORIGIN}/transfer?token=trf_…\`, that works once, for 7 days, and only for a
session of that address. Nothing moves until it is accepted, on that page (a form) or with
\`POST /v1/self/transfers/accept { token }\` → \`200 { app_id, slug, url, role: "owner", transfer, credentials_revoked }\`.
Accepting moves the app, its data, members and grant links to the new owner: the new
owner's agents reach it, the old owner's no longer do. With \`keep_as_member\` (default
\`true\`) the previous owner stays on the app as a plain member (their app sessions keep
working with a member's reach); with \`false\` they lose access at once. The app's unspent
sign-in grants (test-session tokens included) and its preview tokens are voided, and every
live service credential of the app is revoked, exactly as \`DELETE /v1/apps/:id/credentials/:id\`
would (its token answers \`401 unauthorized\` with \`details.reason: "revoked"\`, an
overlap-window token stops with it, and the list shows it revoked). A credential acts with the
owner's authority, so one minted by the previous owner must not carry on under the new
owner's; the new owner mints their own. The accept answer's \`credentials_revoked\` counts
them, and the previous owner's notice mail says so. Grant links keep working: each is
bounded by its custom role, and the new owner lists and revokes them like their own.

- One offer at a time: a second \`POST\` while one is pending is \`409 conflict\` with
  \`details.transfer\`; so is offering the app to its owner's own address.
- \`GET /v1/apps/:id/transfer\` → \`{ transfer }\` for the pending offer, or \`{ transfer: null }\`
  (an offer past its expiry is no longer pending). \`DELETE\` withdraws it (\`200 { transfer }\`
  with status \`withdrawn\`; the link dies at once) or answers \`404 not_found\` when none is
  pending.
- Accepting as another address is \`403 forbidden\` (\`details.reason: "transfer_email_mismatch"\`),
  a recipient who already owns \`MAX_APPS_PER_ACCOUNT\` live apps gets
  \`409 account_quota_exceeded\`; both leave the offer pending. A spent, withdrawn, expired or
  unknown link, or an app deleted meanwhile, is \`410 gone\`.
- A relay that cannot send mail answers \`503 auth_provider_unavailable\` to an offer.
- Offers share the limits of member invitations (see "Members and invitations"): the
  per-address \`RATE_LIMIT_INVITE\` window, and the owner's daily mail cap
  \`INVITE_MAILS_PER_OWNER_DAY\`. Over either: \`429 rate_limited\` with \`Retry-After\`,
  and no offer is recorded or mailed.

## Organizations

\`/v1/orgs\` (agent key — acting for the human who claimed it — or session). An organization
is \`{ id, name, role, billing_human_id, member_count, created_at, updated_at }\` where \`role\`
is the caller's (\`admin\` or \`member\`); a member is \`{ human_id, email, role, created_at }\`.
The creator is the first admin and the billing account. Only admins rename, add (an existing
account, by email: \`404 not_found\` when no account has the address, \`409 conflict\` when
already a member), re-role and remove (\`403 forbidden\` for members); anyone may remove
themselves. The last admin can be neither demoted nor removed (\`409 conflict\`,
\`details.reason: "last_admin"\`). When the billing account stops being an admin or leaves,
billing passes to the longest-standing admin. To a non-member an organization does not exist
(\`404 not_found\`); an unclaimed agent gets \`403 agent_not_claimed\`.

## Your account (\`/v1/self\`)

- \`GET /v1/self/apps\`: apps I own (live) then apps I joined, as AppSummary plus
  \`role\`, \`custom_roles\`, \`favorite\` and \`last_viewed_at\`. \`/recent\` (apps I recorded
  opening with \`POST /v1/self/apps/:appId/view\` and can still see, newest first, \`?limit=\`
  1–100, default 20) and \`/deleted\` (my apps in the trash, with \`deleted_at\` and
  \`purge_after\`) share the shape. \`PUT\`/\`DELETE /v1/self/apps/:appId/favorite\` are
  idempotent. An app I neither own nor belong to is \`404 app_not_found\`; my own app in the
  trash is \`410 soft_deleted\`.
- \`GET /v1/self/apps/:appId/upgrade\` answers the template-upgrade state in the wire's
  TemplateUpgradePreview shape plus \`template\`, \`badge\` and \`dismissed_version\`. No app
  carries template provenance yet, so every app answers \`available: false\`, \`badge: false\`.
  \`POST …/upgrade/dismiss { version? }\` records the dismissed version (the one on offer when
  none is named; \`409 conflict\` when nothing is on offer and none is named). Owner only
  (\`403 forbidden\` for a member).
  \`POST …/upgrade\` and \`POST …/upgrade/revert\` answer the same real state: for an app I own
  or joined, \`409 conflict\` (\`details.template: null\`: not installed from a template, so
  nothing to upgrade or revert); any other app \`404 app_not_found\`.
- \`PUT /v1/self/marketing-consent { marketing_consent }\` answers the profile.
  \`POST /v1/self/signup-source { source, detail? }\` records the answer once (\`201\`; a second
  answer is \`409 conflict\` with \`details.recorded\`).
- Browser push: \`GET /v1/self/push-subscription/vapid-public-key\` → \`{ public_key }\`, the
  relay's VAPID key as a base64url 65-byte uncompressed P-256 point (\`501 not_implemented\`
  with \`details.reason\` \`vapid_key_missing\` or \`vapid_key_invalid\` when the operator has not
  set a usable \`VAPID_PRIVATE_KEY\`; development generates one and keeps it in D1).
  \`POST /v1/self/push-subscriptions\` takes \`PushSubscription.toJSON()\` as is
  (\`{ endpoint, expirationTime?, keys: { p256dh, auth } }\`, https endpoint) → \`201\` new or
  \`200\` updated \`{ id, endpoint, expires_at, created_at, updated_at }\`; an endpoint saved by
  another account moves to this one; at most 20 per account (the least recently saved goes).
  \`DELETE /v1/self/push-subscriptions?endpoint=…\` (or a \`{ endpoint }\` body) → \`204\`, idempotent.
- \`GET /v1/self/usage\` → \`{ meters: { apps: { used, limit }, rows: { used, limit_per_app },
  storage_bytes: { used, limit_per_app } }, apps: [{ app_id, slug, rows, row_limit,
  storage_bytes, storage_limit }], month: { start, flows } }\`, counted live from my live apps.
  \`flows\` maps each flow metric (\`emails\`, \`push_notifications\`, \`webhook_deliveries\`,
  \`ingest_deliveries\`, \`agent_tasks\`) to this UTC month's count; a metric counts what the
  features that produce it record, zero until then. \`GET /v1/self/usage/series?granularity=day|hour&days=\`
  → \`{ granularity, start, end, points: [{ start, flows }], month_to_date }\`, every bucket present.

## Deleting an account

\`DELETE /v1/self\` → \`202 { ok: true, email, expires_at }\` and a mail to the account's
address with \`{API_ORIGIN}/account/delete?token=del_…\` (one hour; asking again replaces the
link). Nothing is deleted until that page's form is posted (opening the link changes
nothing). Confirming, in one step:

1. every app I own that is not deleted goes to the trash (restorable by nobody; purged after
   30 days like any trashed app);
2. every key of every agent I claimed is revoked (\`401 invalid_api_key\` from the next
   request); device codes I approved and that were not collected are denied;
3. every session is deleted, so every browser is signed out; unused claim codes, pending
   sign-in links and unspent app sign-in grants go too;
4. my memberships of other people's apps end, and pending transfers I offered are withdrawn;
5. my organization seats end: where I was the last admin, the longest-standing remaining
   member becomes admin; an organization left empty is deleted; billing passes to the
   longest-standing admin;
6. favorites, views, dismissed badges, the signup answer, push subscriptions and flow
   counters are deleted, and then the account itself. The address may sign up again later as
   a new, empty account.

A spent, replaced, expired or unknown link is \`410 gone\`.

## Preview tokens and test-session tokens

- **Preview tokens** let someone without an account open a **private** app.
  \`POST /v1/apps/:id/preview-tokens { label?, ttl_seconds? }\` → \`201 { id, token, preview_url,
  label, status, created_at, expires_at, revoked_at }\` (the token, \`prv_…\`, shown once;
  default 7 days, clamped to 30; public and link apps get \`409 conflict\`). \`GET\` lists them
  with \`status\` \`active\`, \`expired\` or \`revoked\`; \`DELETE …/preview-tokens/:tokenId\`
  revokes (\`204\`, idempotent; another app's id is \`404 not_found\`). The token rides in
  \`preview_url\`'s \`#k=\` fragment, like a link app's share token, and the gate and page
  script present it the same way (\`x-service-share\`, socket subprotocol
  \`service.share.<token>\`). Its holder is an anonymous visitor: they see what the manifest
  grants \`anyone\`, nothing more. An expired, revoked, forged or other app's token, or one
  presented after the app stopped being private, answers \`401 unauthorized\` on the app
  origin. A transfer revokes the app's preview tokens. Asset URLs in a served document carry
  their usual ~2-hour passes, which outlive a revocation by at most that long.
- **Test-session tokens** let a headless client (a test runner, a screenshot bot) become the
  owner on the app's own origin. \`POST /v1/apps/:id/test-session-tokens\` →
  \`201 { token, expires_at, app_id, session_url, open_url }\`: the token is a one-time sign-in
  grant (\`sgr_…\`, 10 minutes) redeemed like the one \`/authorize\` hands out — \`POST
  {session_url} { grant: token }\` answers \`{ token, expires_at, session }\` with an owner app
  session, or a browser opens \`open_url\` (\`#svc_grant=\`). Spent, expired, other-app and forged
  tokens answer \`401 grant_invalid\` (one shown to the wrong app is not spent). A relay without
  \`APP_SESSION_SECRET\` answers \`503 auth_provider_unavailable\`.

| path | what |
|---|---|
| \`GET /transfer?token=\` | accept an ownership transfer (after signing in as the offered address) |
| \`GET /account/delete?token=\` | confirm deleting the account |
`;
