/**
 * The skill document: the guide an agent reads to learn the relay. Served at
 * /skills/service/SKILL.md with a version the CLI compares against its own copy
 * (spec B §Versioning 5). Bump SKILL_VERSION whenever the text changes meaningfully.
 */

export const SKILL_VERSION = "0.6.0";

export const SKILL_MD = `<!-- service skill v${SKILL_VERSION} -->
# The relay: a guide for agents

The relay hosts small web apps that you, an agent, deploy for the human you work for, and
keeps the data those apps share. You drive it with the \`service\` CLI or the \`/v1\` HTTP API;
your human uses the apps in a browser and manages you from the owner console.

## 1. Get an identity

Run:

    service agent register --url <relay-url>

The CLI starts a device authorization and prints a link and a short code such as
\`ABCD-EFGH\`. Give the link to your human. They sign in, check the code and approve; the CLI
then saves your API key (\`svc_…\`) in its profile. Agents registered this way already belong
to the human who approved them.

If you cannot wait in the foreground, split it: \`service agent register --start\` prints the
link and parks the request; \`service agent register --resume\` checks once and saves the key
when it was approved (\`not_approved_yet\` means ask again later).

Some relays also allow direct registration (\`--no-device\`, or \`--secret\` where the operator
set a registration secret). A directly registered agent is unclaimed: ask your human to open
the console, choose **Mint a claim code**, and give you the \`cc_…\` code, then run:

    service agent claim <code>

Claim codes work once and expire after 15 minutes. Binding is one-way.

## 2. Look after your key

- \`service key list\` shows your key's prefix, when it was made and last used.
- \`service key mint\` makes a sibling key (shown once).
- \`service key revoke --yes\` revokes the key you are using. Every later call with it fails.
- Your human can pause, resume, rotate or revoke your key from the console. A paused or
  revoked key answers \`401 invalid_api_key\` at once.
- Never print your full key. The CLI only ever shows a masked prefix.

## 3. Deploy an app

An app is a folder with \`index.html\`, \`manifest.json\` and an optional \`assets/\` folder
(images, fonts, media, data files; at most 50, 5 MB each). Scripts and styles go inline in
\`index.html\`: the relay serves \`.js\`, \`.css\`, \`.svg\` and \`.html\` files as downloads only,
and refuses them as assets.

    service deploy ./myapp                       # private by default
    service deploy ./myapp --visibility public --slug my-notes
    service deploy ./myapp --check               # validate only, change nothing

The answer carries \`app_id\`, \`slug\` and \`url\` (\`https://<slug>.<apps domain>/\`). A \`link\` app
also gets a \`share_url\` with a secret \`#k=\` part: give that to the people who should see it.
\`service apps share-link rotate <app>\` makes the old link stop working.

To change an app, redeploy with \`--app <id or slug>\`. What you do not send is kept. The
relay refuses a redeploy that would strand rows (a collection removed, a schema tightened,
a collection made append-only) or show more than before (a collection readable by more
people, a new capability, a new outside host). The error lists each break in
\`details.breaks\`. Only redeploy with \`--force\` after your human agreed: a removed
collection is detached, never deleted.

\`service apps list | show | update | delete --yes | restore | purge --yes | audit\` manage
apps. \`apps audit\` lists collections whose permissions expose more than your human may expect.

### The manifest

\`manifest.json\` is a JSON Schema 2020-12 document. Row schemas live under \`$defs\`; the app
lives under \`x-service-manifest\`:

    {
      "$defs": { "Note": { "type": "object", "properties": { "text": { "type": "string", "maxLength": 2000 } },
                           "required": ["text"], "additionalProperties": false } },
      "x-service-manifest": {
        "app": { "name": "Notes" },
        "collections": {
          "notes": { "schema": { "$ref": "#/$defs/Note" },
                     "read": ["owner", "member"], "write": ["owner", "member"], "delete": ["owner"] }
        }
      }
    }

Every collection names who may \`read\`, \`write\` and \`delete\` (and optionally \`update\` and
\`countRead\`): \`owner\`, \`member\`, \`anyone\`, roles you declare, and row-scoped subjects such
as \`creator\`. Nobody gets access a list does not give, not even the owner. The full grammar
is the manifest guide at \`/docs/manifest\` on the relay. A refused manifest names the
offending spot in \`details.path\` (\`""\` is the manifest as a whole: it must be a JSON object).

## 4. Use the data

Rows live in collections. Each row has a \`key\`, \`data\`, a \`version\`, and who wrote it.

    service data <app> notes upsert --data '{"text":"hello"}'
    service data <app> notes list --where '[{"field":"text","op":"eq","value":"hello"}]'
    service data <app> notes update <key> --data '{"text":"hi"}' --if-match 1
    service data <app> notes delete <key>        # restorable for 30 days
    service data <app> notes import --file rows.ndjson
    service apps watch <app>                     # follow changes live

Over HTTP the same lives under \`/v1/apps/<id>/collections/<name>\`, and the change feed is at
\`/v1/apps/<id>/feed?since=<seq>&wait=25\`. Send \`if_match\` with the version you read so that
you never overwrite someone else's change; a \`409 conflict\` carries the current row in
\`details.current\`.

### In the page

The relay puts \`window.service\` into every page it serves. Read and write data only through
it; it signs the viewer in, keeps a live local copy of each collection and follows changes.

    <script>
      service.collections.on("notes", render);            // { kind: "upsert" | "delete", collection, row }
      service.ready.then(render);                          // session known, collections loaded
      function render() {
        const rows = service.collections.snapshot("notes"); // [{ key, data, version, author, createdAt, updatedAt }]
        /* draw rows */
      }
      async function add(text) {
        try { await service.collections.create("notes", { text }); }
        catch (e) { alert(e.code); }                       // e.g. collection_write_forbidden
      }
    </script>

- \`snapshot(name)\` and \`get(name, key)\` are instant reads of the local copy (\`[]\` before
  \`ready\`). \`list(name, { where, sort, limit })\` and \`count(name)\` ask the relay; use them
  for collections declared \`"mirror": "server"\`, which are never copied into the page.
- \`create(name, data)\`, \`upsert(name, key, data)\`, \`update(name, key, data, { ifMatch })\`,
  \`delete(name, key, { ifMatch })\` return promises; a refusal rejects with \`e.code\` and
  \`e.details\` (a stale \`ifMatch\` gives \`conflict\` with \`details.current\`).
- \`service.session\` says who is looking (\`kind\`: \`owner\`, \`member\` or \`anonymous\`);
  \`session.login()\` sends them through sign-in. \`service.feed.on(fn)\` sees every change.
- Row fields are camelCase in the page (\`createdAt\`); the same rows are snake_case over HTTP.
- The page sees exactly what the viewer's \`read\` list allows, live updates included. On a
  public app, give collections anyone may write an \`anonWriteBudget\`; if such a collection
  scopes reads or edits to \`creator\`, each browser gets its own visitor identity.

The page script's full reference is at \`/docs/page-script\` on the relay.

## 5. Share an app with people

- **Private** apps (the default) open for the owner and the app's members, after they sign in.
  \`service members add --app <app> --email friend@example.com\` adds someone with an account,
  or mails them an invitation. \`service members set-role --app <app> --human <id>
  --custom-role editor\` gives a custom role the manifest declares. \`members list|roles|remove\`
  manage them; removal takes effect at once.
- **Link** apps open for whoever has the \`share_url\`; rotate it to cut everyone off.
- **Public** apps open for anyone; only what the manifest grants \`anyone\` is theirs.
- **Grant links** hand out one declared role without an account:
  \`service grants mint --app <app> --role guest [--pin-row <key>] [--mode once]\` prints a
  \`grant_url\` once. \`service grants list|revoke\` manage them.
- **Service credentials** let a backend your human runs use one app's collections:
  \`service credentials mint --app <app> --grants '[{"collection":"notes","ops":["read"]}]'\`
  prints a \`svcs_…\` token once. It works only on that app's collection endpoints, within the
  ops listed.

Ask your human before widening who can see their data.

## 6. Errors

Every error is \`{ "error": { "code", "message", "hint", "retryable", "docs_url", "details"? } }\`.
Read \`hint\`: it says what to do next. Only \`rate_limited\` (wait \`Retry-After\` seconds) and
\`ingest_write_unavailable\` are worth retrying unchanged. \`cli_upgrade_required\` (426) means
upgrade the CLI. The full list lives at \`/docs/errors\`; the API at \`/v1/openapi.json\`.

Every page under \`/docs\` on the relay (\`/docs\` lists them) answers HTML to a browser and
markdown when you send \`Accept: text/markdown\`; a guide's markdown is also at its address
plus \`.md\` (\`/docs/manifest.md\`). A path in a hint, such as \`/docs/manifest#limits\`, is
on the relay's own origin.

## 7. Profiles

The CLI keeps profiles in \`\${XDG_CONFIG_HOME:-~/.config}/service/config.json\` (mode 0600).
\`service config show\`, \`config list\`, \`config use <name>\`, \`config add <name> --url --api-key\`,
\`config rm <name>\`. \`SERVICE_URL\`, \`SERVICE_API_KEY\` and \`SERVICE_PROFILE\` override the
profile; flags override the environment.

## 8. Your human's taste, and telling us what broke

- Keep what you learn about the UI your human likes (colours, density, wording, what they
  asked you never to do again) in your taste notes: \`service taste get\` before you build or
  change a page, \`service taste set --file notes.md\` to replace them (\`--file -\` or piped
  stdin work too), \`service taste clear --yes\` to drop them. They belong to your agent
  identity, at most 16 KiB.
- When the relay itself misbehaves (a 5xx, a behaviour that differs from this guide, a
  missing capability), file it once: \`service feedback create --type bug --message "…"\`
  (\`feature\` or \`note\` for the rest; \`--app-id\` when it is about one of your apps). Say
  what you ran, what you expected and the exact error. \`service feedback list\` shows what
  you filed. It is not for bugs in your own app.

## 9. Reference sections

This guide stays short; each topic below has a reference section on the relay, raw markdown
with no key needed. Read the one you need before you use the feature.

- \`/skills/service/references/manifest.md\`: the manifest in brief
- \`/skills/service/references/page-script.md\`: \`window.service\` in the page
- \`/skills/service/references/webhooks.md\`: sending row changes out
- \`/skills/service/references/ingest.md\`: letting the outside world write in
- \`/skills/service/references/attachments.md\`: files beside rows
- \`/skills/service/references/assets.md\`: files deployed with the page
- \`/skills/service/references/agent-tasks.md\`: work an app queues for you
- \`/skills/service/references/notify-targets.md\`: who notify rules reach, and how
- \`/skills/service/references/registering.md\`: getting and keeping a key
- \`/skills/service/references/community-templates.md\`: installing and publishing templates

\`/skills/service/references\` lists them as \`{ sections: [{ slug, title, summary, url, version }] }\`.
Each section's first line carries the guide's version (\`<!-- service skill reference <slug> vX.Y.Z -->\`):
the sections change together with this guide. Error hints name the section that explains them.

## 10. Keep this guide fresh

\`service skill version\` prints the relay's guide version; \`service skill show\` prints this
guide. Read it again, and the sections you use, when the version changes.
`;
