/**
 * The MCP flavour of the skill document (WIRE-MCP §1.5, WIRE §2.11): how to drive the
 * relay through tool calls instead of CLI commands, then the skill document itself for the
 * concepts (apps, collections and the change feed, schemas, permissions), then every
 * reference section inlined, since an MCP client cannot open them on demand. Served at
 * /skills/service/MCP.md (+ /version), read by the MCP guide prompt and resource and by
 * `get_skill`, all rendered here in process. Its version follows SKILL.md's.
 */
import { SKILL_MD, SKILL_VERSION } from "./skill-doc";
import { REFERENCE_SECTIONS, referenceStamp } from "./references";

export const MCP_GUIDE_VERSION = SKILL_VERSION;

const PREFACE = `<!-- service mcp guide v${MCP_GUIDE_VERSION} -->
# Using the relay through MCP

You reach this relay through its MCP endpoint: every operation is a tool call, not a CLI
command. The guide below the line was written for the CLI; read each \`service …\` command as
the tool beside it here.

| CLI | Tool call |
|---|---|
| \`service deploy\` | \`deploy_app\` (no \`app_id\` creates; with \`app_id\` publishes a new version; \`dry_run: true\` checks only) |
| \`service apps list / show / delete / restore\` | \`apps\` with \`action\` \`list\`, \`show\`, \`delete\`, \`restore\`, … |
| \`service data list / get / create / update / delete\` | \`list_rows\`, \`get_row\`, \`upsert_row\`, \`update_row\`, \`delete_row\` |
| \`service apps watch\` | \`get_feed_events\` with \`since\` = the last \`cursor\` and \`wait\` about 25 |
| \`service members / grants / credentials / connections / ingest\` | the tool of the same name, with \`action\` |
| \`service key\`, \`service agent whoami\` | \`key\`, \`agent\` |
| \`service skill\` | \`get_skill\` |

Habits that save you trouble:
- Give \`upsert_row\` a stable \`key\`: a retry then returns the same row instead of a second one.
- On a redeploy send only what changed; omitted \`html\`, \`manifest\` or \`assets\` are kept.
- Poll with \`list_rows\` \`since\` or \`get_feed_events\`; \`resync_required\` means list again.
- Send files inline (\`content_base64\`); this endpoint reads nothing from any disk.
- A failed call answers \`{ "error": "<code>", "status", "message", "hint" }\`: follow the hint.
  When the relay itself failed the answer carries \`report\`: file it once with \`feedback\`.

---

`;

const SECTIONS_HEADING = `

---

# Reference sections

The sections below are the skill's reference pages, in full. Read the one for the feature
you are about to use.

`;

let rendered: Promise<string> | undefined;

/** The whole guide; the sections are text modules loaded on first use, so it is built once per isolate. */
export function mcpGuideMarkdown(): Promise<string> {
  rendered ??= Promise.all(REFERENCE_SECTIONS.map(async (section) => `${referenceStamp(section.slug)}\n${await section.markdown()}`))
    .then((sections) => PREFACE + SKILL_MD + SECTIONS_HEADING + sections.join("\n"));
  return rendered;
}
