// Renders docs/api.md from the route registry (see scripts/api-doc.ts).
import { buildApp } from "../src/http/app";
import { openApiDocument } from "../src/http/openapi";
import { catalogue } from "../src/errors";
import { accountSection } from "./api-doc-account";

buildApp(); // registers every route

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; enum?: unknown[]; const?: unknown; anyOf?: Schema[]; format?: string; minLength?: number; maxLength?: number };

function typeOf(s: Schema | undefined): string {
  if (!s) return "any";
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" \\| ");
  if (s.type === "array") return `${typeOf(s.items)}[]`;
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  return s.type ?? "any";
}

function fields(s: Schema | undefined): string {
  if (!s?.properties || Object.keys(s.properties).length === 0) return "_(none)_";
  return Object.entries(s.properties)
    .map(([name, p]) => `\`${name}\`${s.required?.includes(name) ? "" : "?"}: ${typeOf(p)}`)
    .join(", ");
}

const authText: Record<string, string> = {
  agentKey: "agent key", session: "human session (cookie)", serviceCredential: "service credential (`svcs_…`, its own app only: its collections, and the member list when minted with `members: true`)", registrationSecret: "registration secret (secret mode only)",
};

const intro = `# The relay HTTP API

This is the reference for the relay's HTTP API. The machine-readable version is served
at \`/v1/openapi.json\` (OpenAPI 3.1). Both come from the same zod schemas that validate
each request, so they cannot drift from what the relay accepts. The endpoint section
below is generated: run \`npm run docs:api\` after changing a route.

## Conventions

- **Origins.** The API, the owner console, \`/device\` and the docs live on \`API_ORIGIN\`.
  Each app has its own origin, \`<slug>.<APPS_DOMAIN>\`.
- **Agents** authenticate with \`Authorization: Bearer svc_…\`. A missing header answers
  \`401 unauthorized\`. A key that is unknown, revoked or paused answers
  \`401 invalid_api_key\`, and \`details.reason\` says which.
- **People** authenticate with the \`relay_session\` cookie set by the magic-link sign-in
  (\`__Host-relay_session\` on a relay served over https).
  Every mutating request that carries the cookie must send an \`Origin\` (or \`Referer\`)
  equal to \`API_ORIGIN\`. Otherwise it gets \`403 csrf_origin_mismatch\`.
- **Bodies** are JSON (\`content-type: application/json\`), at most \`MAX_JSON_BODY_BYTES\`
  (1 MiB by default; more gets \`413 payload_too_large\`). Unknown fields are refused.
  A malformed or mistyped body gets \`400 invalid_request\`, and \`details.field\` names
  the first offending field (\`details.issues\` lists them all).
- **Errors** always have this shape:
  \`{ "error": { "code", "message", "hint", "retryable", "docs_url", "details"? } }\`.
  \`docs_url\` points at \`/docs/errors#<code>\`. Only \`rate_limited\` and
  \`ingest_write_unavailable\` are retryable as they are. The one exception is the
  device-token poll, which uses the RFC 8628 string form (\`{ "error": "authorization_pending" }\`).
- **Unknown paths** get \`404 not_found\`. A known path with the wrong method gets
  \`405 method_not_allowed\`, with an \`Allow\` header.
- **CLI version.** A request with \`x-service-cli-version\` below \`MIN_CLI_VERSION\` gets
  \`426 cli_upgrade_required\` with \`details.min_version\` and \`details.your_version\`.
  Requests without the header are not checked.
- **Rate limits.** Registration, the device flow, sign-in links, claims, adding members and
  offering transfers are limited per client IP per window. Mail to other people
  (invitations, member notices, transfer offers) is also capped per owner per UTC day.
  Over a limit: \`429 rate_limited\` with \`Retry-After\` (seconds).
- **Secrets** carry a kind prefix: \`svc_\` agent keys, \`cc_\` claim codes, \`dc_\` device
  codes, \`svcs_\` service credentials, \`gr_\` grant links (in a grant_url's \`#g=\`) and
  \`grh_\` the per-browser credential a grant link is exchanged for. They are 128 random
  bits, stored only as sha256, and shown once. So are \`trf_\` transfer links, \`del_\`
  account-deletion links and \`prv_\` preview tokens. Lists show prefixes only (an agent key's
  first 10 characters, a service credential's first 12).
- **Lists** are \`{ items, next_cursor }\`.

## Binding an agent to a human

1. **Device flow (the default).** The agent calls \`POST /v1/device/code\` and shows the
   human \`verification_uri_complete\` (\`/device?code=ABCD-EFGH\`). The human signs in and
   approves. The agent polls \`POST /v1/device/token\` every \`interval\` seconds: it gets
   \`authorization_pending\`, \`slow_down\` (add 5 seconds), \`access_denied\` or
   \`expired_token\`, and finally \`200 { agent_id, agent_key, name }\`. Only that one poll
   gets the key. The agent already belongs to the human who approved it.
2. **Direct registration** (\`POST /v1/register\`) depends on \`REGISTRATION_MODE\`:
   \`closed\` answers 404, \`secret\` needs \`Authorization: Bearer <registration secret>\`,
   and \`open\` needs nothing. The agent starts unclaimed. The human mints a claim code in
   the console (\`POST /v1/self/claim-codes\`: one use, 15 minutes), and the agent redeems it
   with \`POST /v1/agents/claim\`. Binding is one way.

## Signing in (people)

\`POST /v1/auth/request-link { email, return_to? }\` mails a link to
\`/v1/auth/verify?token=…\`. The link works once, for 15 minutes. Opening it creates the
account on first use, sets the session cookie (HttpOnly, SameSite=Lax, Secure on https)
and redirects to \`return_to\` (a path on the API origin) or to the console. A spent or
expired link redirects to \`/signin?error=link_invalid\`. \`POST /v1/auth/logout\` revokes
the session. In development mode, the mail is kept at
\`GET /__dev/mail?to=<address>\` → \`{ messages: [{ id, to, subject, text, html, created_at }] }\`,
newest first.

## Members and invitations

An app's owner (or their agent) adds people by email with \`POST /v1/apps/:id/members\`.
Someone who already has an account becomes a member at once (\`201 { member }\`; \`200\`
when they already were one). Anyone else is mailed an invitation and the answer is
\`200 { ok: true, invited, expires_at }\`. The invitation link
(\`{API_ORIGIN}/invite?token=inv_…\`) works once, for 7 days, and only for a session of the
invited address: opening it signed out offers a sign-in link back to it, and accepting
(the page's form, or \`POST /v1/self/invites/accept { token }\`) creates the membership.
A spent, replaced (the address was invited again) or expired link answers \`410 gone\`;
another signed-in address gets \`403 forbidden\` and the invitation stays usable. A relay
that cannot send mail (production without the \`MAIL\` binding or \`MAIL_FROM\`) answers
\`503 auth_provider_unavailable\` to an invitation; adding an existing account needs no mail.

Adding people is limited so the relay cannot be used to mail strangers. \`POST\` on the
members route counts in a per-address window (\`RATE_LIMIT_INVITE\`, default 20 per 60
seconds), and every invitation, courtesy notice ("you were added") and transfer offer an
owner's apps send draws on one daily budget per owner (\`INVITE_MAILS_PER_OWNER_DAY\`,
default 50 per UTC day, shared by the owner's agents and session; 0 turns it off). Over
the window, or an invitation over the budget: \`429 rate_limited\` with \`Retry-After\`
(seconds to the window's end, or to the next UTC day; \`details\` has \`retry_after\`,
\`limit\`, and \`per: "owner", window: "day"\` for the budget), and nothing is recorded
or mailed. An existing account is still added over the budget, without the notice.

\`GET /v1/apps/:id/members\` also answers a service credential of the app minted with
\`members: true\` (read only: its own app, the same \`{ members }\`). Without the flag a
credential is refused as on every owner route (\`401 unauthorized\`); adding, re-roling
and removing members, the roles summary, grants and credentials stay closed to every
credential.

Member rows are camelCase (\`{ humanId, email, role, customRoles, customRole, createdAt }\`,
\`customRole\` being the first of \`customRoles\` or null) while the request field is
\`custom_roles\`. The owner is listed first with \`role: "owner"\` and cannot be re-roled or
removed (\`409 conflict\`). Custom roles must be declared by the live manifest (built-in
names and undeclared roles are \`400 invalid_request\`), at most 8 per member. A member signs
in to the app's own origin through \`/authorize\` and gets an app session of kind
\`member\` carrying their roles, re-checked on every request: new roles apply at once, and
removal refuses their next request. Adding someone back does not revive app sessions
issued before. \`GET /v1/apps/:id/roles\` computes each role's per-collection
\`member_access\` and \`grant_access\` with the permission engine itself.

${accountSection}
## Other paths on the API origin

| path | what |
|---|---|
| \`GET /\` | the owner console (sign-in at \`/signin\`) |
| \`GET /device?code=\` | the device-approval page |
| \`GET /console/apps\` | the apps I own, in the trash, or joined |
| \`/console/apps/<id>\` | an owned app's page: facts, visibility and share link, disclosure, collections, trash, restore, purge |
| \`/console/apps/<id>/members\` | people and access: members, grant links and service credentials (links and tokens shown once, on the page answering the mint or rotate) |
| \`/console/apps/<id>/collections/<name>\`, \`…/feed\` | an app's rows (newest first, searchable) and its live feed |
| \`GET /console/account\` | my account: profile, product-update mail, usage, deletion |
| \`GET /console/gallery\` | the community template gallery: approved templates, searchable; open without signing in |
| \`/console/gallery/<handle>/<slug>\` | a template's page: card, what it asks for, destinations, setup steps, reviews, and the install form (signed in) |
| \`/console/publisher\` | my publisher profile: claim the handle, edit the profile, my templates' review state, answer reviews |
| \`/console/review\` | the operator's review queue and a submission's page with Approve and Reject (operators only) |
| \`GET /account/delete\` | without a token: sign in, or ask for the confirmation link |
| \`GET /invite?token=\` | accept an app invitation (after signing in as the invited address) |
| \`GET /docs/errors\` | every error code, with an anchor per code |
| \`GET /skills/service/SKILL.md\` | the agents' guide (markdown), no credential |
| \`GET /skills/service/SKILL.md/version\` | \`{ version }\` |
| \`GET /__dev/mail\` | the development outbox (development mode only): a page for a browser, JSON otherwise |
| \`POST /__dev/cron\` | runs every scheduled sweep now, or as if at \`{ now }\` (development mode only) → \`{ ran }\` |
| \`GET /docs\`, \`/docs/manifest\`, \`/docs/page-script\` | the guides: HTML by default, markdown for \`Accept: text/markdown\` |
`;

export function renderApiDoc(): string {
  const doc = openApiDocument("{API_ORIGIN}") as { paths: Record<string, Record<string, any>> };
  const sections: string[] = [];
  const byTag = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const auth = (op.security as Array<Record<string, unknown>>).flatMap((s) => Object.keys(s)).map((k) => authText[k] ?? k);
      const body = op.requestBody?.content?.["application/json"]?.schema as Schema | undefined;
      const responses = Object.entries(op.responses as Record<string, { description: string; content?: Record<string, { schema: Schema }> }>)
        .map(([status, r]) => {
          const schema = r.content ? Object.values(r.content)[0].schema : undefined;
          const shape = schema && status.startsWith("2") ? ` — ${fields(schema)}` : "";
          return `- \`${status}\` ${r.description}${shape}`;
        }).join("\n");
      const text = [
        `### \`${method.toUpperCase()} ${path}\``, "", op.summary, "",
        `- **Auth:** ${auth.length ? auth.join(" or ") : "none"}`,
        ...(body ? [`- **Body${op.requestBody.required ? "" : " (optional)"}:** ${fields(body)}`] : []),
        ...(op.parameters?.some((p: { in: string }) => p.in === "query") ? [`- **Query:** ${op.parameters.filter((p: { in: string }) => p.in === "query").map((p: { name: string; required: boolean }) => `\`${p.name}\`${p.required ? "" : "?"}`).join(", ")}`] : []),
        "", responses, "",
      ].join("\n");
      const tag = op.tags[0] as string;
      byTag.set(tag, [...(byTag.get(tag) ?? []), text]);
    }
  }
  for (const [tag, texts] of byTag) sections.push(`## Endpoints: ${tag}\n\n${texts.join("\n")}`);
  const codes = Object.entries(catalogue).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.retryable ? "yes" : "no"} | ${e.meaning} |`).join("\n");
  return `${intro}\n${sections.join("\n")}\n## Error codes\n\n| code | status | retryable | meaning |\n|---|---|---|---|\n${codes}\n`;
}
