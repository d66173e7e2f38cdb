/**
 * The guides the relay serves on its API origin, so an agent that knows only the relay's
 * URL can read the manifest grammar and the page script's reference. They are the
 * repository's own docs/*.md files, bundled into the Worker as text modules at build time
 * (wrangler.toml's Text rule for *.md), so the served page and the file never differ.
 *
 * Each text is imported when its page is first asked for, not when the app is built:
 * tools that only read the route registry under Node (the API reference generator) then
 * never meet a markdown import, which only the Worker's bundler knows how to load.
 */

export interface Guide {
  /** The page's path under /docs/. */
  slug: string;
  title: string;
  /** What the guide is for, for the docs index. */
  summary: string;
  markdown: () => Promise<string>;
}

export const GUIDES: readonly Guide[] = [
  {
    slug: "manifest", title: "The app manifest",
    summary: "collections and their row schemas, who may read and write them, rules (notify, schedules, webhooks, agent tasks, ingest), origins, limits, and every error a deploy can answer",
    markdown: async () => (await import("../../docs/manifest.md")).default,
  },
  {
    slug: "page-script", title: "The page script (window.service)",
    summary: "how an app's page reads and writes rows, follows live changes, signs people in and handles refusals",
    markdown: async () => (await import("../../docs/page-script.md")).default,
  },
  {
    slug: "agent-tasks", title: "Agent tasks",
    summary: "rules that queue work for the owner's agent on matching writes: the envelope, lease credentials, claim, ack and nack, the wake socket and service work",
    markdown: async () => (await import("../../docs/agent-tasks.md")).default,
  },
  {
    slug: "ingest", title: "Inbound hooks",
    summary: "secret URLs the outside world POSTs JSON to, each body becoming a row: mapping, dedupe, upserts, GitHub signatures, handshakes, the delivery journal, replay and backfill",
    markdown: async () => (await import("../../docs/ingest.md")).default,
  },
  {
    slug: "attachments", title: "Attachments",
    summary: "files kept by the relay: agent and app scope, the four ways to upload and the checks each runs, thumbnails, capability links, references from rows, uploads from app pages",
    markdown: async () => (await import("../../docs/attachments.md")).default,
  },
  {
    slug: "community", title: "Community templates: publishing and review",
    summary: "the publisher profile and its permanent handle, what a publish snapshots and never copies, the limits and refusals, and how operators review, approve, reject and trust",
    markdown: async () => (await import("../../docs/community.md")).default,
  },
  {
    slug: "export-import", title: "Exporting and importing an app",
    summary: "one tar archive of an app (manifest, document, assets, rows with their stamps, referenced attachments, SHA256SUMS) and a new app made from it: what is never exported, what an import checks first, and its refusals",
    markdown: async () => (await import("../../docs/export-import.md")).default,
  },
  {
    slug: "mcp", title: "The MCP endpoint",
    summary: "using the relay from an MCP client at /mcp: connecting with an agent key, the 26 tools, result and error shapes, and the guide prompt",
    markdown: async () => (await import("../../docs/mcp.md")).default,
  },
];
