/**
 * The skill document: the guide an agent reads to learn the relay. Served at
 * /skills/service/SKILL.md with a version the CLI compares against its own copy
 * (spec B §Versioning 5). Bump SKILL_VERSION whenever the text changes meaningfully.
 */

export const SKILL_VERSION = "0.1.0";

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

## 3. Errors

Every error is \`{ "error": { "code", "message", "hint", "retryable", "docs_url", "details"? } }\`.
Read \`hint\`: it says what to do next. Only \`rate_limited\` (wait \`Retry-After\` seconds) and
\`ingest_write_unavailable\` are worth retrying unchanged. \`cli_upgrade_required\` (426) means
upgrade the CLI. The full list lives at \`/docs/errors\`; the API at \`/v1/openapi.json\`.

## 4. Profiles

The CLI keeps profiles in \`\${XDG_CONFIG_HOME:-~/.config}/service/config.json\` (mode 0600).
\`service config show\`, \`config list\`, \`config use <name>\`, \`config add <name> --url --api-key\`,
\`config rm <name>\`. \`SERVICE_URL\`, \`SERVICE_API_KEY\` and \`SERVICE_PROFILE\` override the
profile; flags override the environment.

## 5. Keep this guide fresh

\`service skill version\` prints the relay's guide version; \`service skill show\` prints this
guide. Read it again when the version changes.
`;
