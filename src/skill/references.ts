/**
 * The skill's reference sections (WIRE §2.11): one markdown page per topic the skill
 * document only touches on, served at /skills/service/references/<slug>.md and listed at
 * /skills/service/references. The texts live beside this file as .md, bundled into the
 * Worker as text modules and imported only when asked for (like the /docs guides, so
 * tools that read the route registry under Node never meet a markdown import). Each is
 * stamped with the skill document's version: they change together.
 */
import { SKILL_VERSION } from "./skill-doc";

export interface ReferenceSection {
  slug: string;
  title: string;
  /** One line: what the section is for, for the list. */
  summary: string;
  markdown: () => Promise<string>;
}

export const REFERENCE_VERSION = SKILL_VERSION;

export const REFERENCE_PATH = "/skills/service/references";

export const REFERENCE_SECTIONS: readonly ReferenceSection[] = [
  {
    slug: "manifest", title: "The manifest",
    summary: "collections, row schemas, permission lists, rule arrays, origins and the redeploy gate, in brief",
    markdown: async () => (await import("./references/manifest.md")).default,
  },
  {
    slug: "page-script", title: "The page script",
    summary: "window.service in an app's page: ready, reading and writing rows, refusals, people, files",
    markdown: async () => (await import("./references/page-script.md")).default,
  },
  {
    slug: "webhooks", title: "Outbound webhooks",
    summary: "rules that POST row changes out: targets, connections, the signature, retries and the journal",
    markdown: async () => (await import("./references/webhooks.md")).default,
  },
  {
    slug: "ingest", title: "Inbound hooks",
    summary: "secret URLs that turn POSTed JSON into rows: mapping, dedupe, signatures, answers, journal",
    markdown: async () => (await import("./references/ingest.md")).default,
  },
  {
    slug: "attachments", title: "Attachments",
    summary: "files beside rows: scopes, the four ways to upload and their refusals, links, references from rows",
    markdown: async () => (await import("./references/attachments.md")).default,
  },
  {
    slug: "assets", title: "Assets",
    summary: "files deployed with an app's page: inline or from an attachment, path rules, how they are served",
    markdown: async () => (await import("./references/assets.md")).default,
  },
  {
    slug: "agent-tasks", title: "Agent tasks",
    summary: "work the app queues for you on matching writes: the rule, service work, the envelope, claim, ack, nack",
    markdown: async () => (await import("./references/agent-tasks.md")).default,
  },
  {
    slug: "notify-targets", title: "Notify targets",
    summary: "who a notify rule can reach, on which channels (email, in-app, push), and what is never sent",
    markdown: async () => (await import("./references/notify-targets.md")).default,
  },
  {
    slug: "registering", title: "Registering an agent",
    summary: "getting a key: the device flow, direct registration, claim codes, and looking after the key",
    markdown: async () => (await import("./references/registering.md")).default,
  },
  {
    slug: "community-templates", title: "Community templates",
    summary: "installing, upgrading, reviewing and publishing templates",
    markdown: async () => (await import("./references/community-templates.md")).default,
  },
];

export function findReference(slug: string): ReferenceSection | undefined {
  return REFERENCE_SECTIONS.find((section) => section.slug === slug);
}

/** The first line of every section: which section, and the skill version it belongs to. */
export function referenceStamp(slug: string): string {
  return `<!-- service skill reference ${slug} v${REFERENCE_VERSION} -->`;
}

/** The list entry of one section, with its address on the relay at `apiOrigin`. */
export function referenceEntry(section: ReferenceSection, apiOrigin: string): { slug: string; title: string; summary: string; url: string; version: string } {
  return { slug: section.slug, title: section.title, summary: section.summary, url: `${apiOrigin}${REFERENCE_PATH}/${section.slug}.md`, version: REFERENCE_VERSION };
}
