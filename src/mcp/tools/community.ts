/**
 * Community templates, the publisher profile and reviews (WIRE-MCP §2.23–2.25). The
 * tools are declared in full so clients see the whole surface, and each action names the
 * `/v1` route the spec gives; until this relay serves those routes every call answers
 * `not_implemented` (src/mcp/relay-call.ts) rather than pretending.
 */
import * as z from "zod";
import { byAction, defineTool, hints, need, present, relay, type ToolDef } from "../define";
import { seg } from "../relay-call";

const setupStep = z.looseObject({ kind: z.string(), label: z.string() });

const communityInput = z.strictObject({
  action: z.enum(["publish", "unpublish", "get_config_contract", "install", "upgrade_check", "upgrade", "revert", "list_pending", "get_submission", "approve", "reject", "set_trust_level"]),
  app_id: z.string().optional(), ref: z.string().optional(), config: z.record(z.string(), z.unknown()).optional(),
  accept_permissions: z.boolean().optional(), expect_version: z.string().optional(),
  title: z.string().min(1).max(80).optional(), description: z.string().max(200).optional(), long_description: z.string().max(4000).optional(),
  tags: z.array(z.string()).max(6).optional(), slug: z.string().optional(), version: z.string().optional(), setup_steps: z.array(setupStep).max(20).optional(),
  category: z.string().optional(), changelog_note: z.string().optional(), derived_from_snapshot_id: z.string().optional(), attest_example_only: z.boolean().optional(),
  snapshot_id: z.string().optional(), note: z.string().optional(), limit: z.number().int().min(1).max(200).optional(), cursor: z.string().optional(),
  handle: z.string().optional(), trust_level: z.enum(["new", "established"]).optional(),
});
type CommunityArgs = z.infer<typeof communityInput>;

const publisherInput = z.strictObject({
  action: z.enum(["claim", "get", "update"]), handle: z.string().regex(/^[a-z0-9](?:[a-z0-9-]{1,30}[a-z0-9])$/).optional(),
  display_name: z.string().max(80).nullable().optional(), bio: z.string().max(500).nullable().optional(), url: z.string().max(200).nullable().optional(),
});
type PublisherArgs = z.infer<typeof publisherInput>;

const reviewInput = z.strictObject({
  action: z.enum(["create", "respond", "report", "remove", "unhold"]), template: z.string().optional(), handle: z.string().optional(), slug: z.string().optional(),
  stars: z.number().int().min(1).max(5).optional(), body: z.string().max(2000).optional(), review_id: z.string().optional(),
  response: z.string().max(2000).nullable().optional(), reason: z.string().max(500).optional(),
});
type ReviewArgs = z.infer<typeof reviewInput>;

/** `<handle>/<slug>` as two encoded segments, or a snapshot id. */
function templatePath(ref: string): string {
  return `/v1/community/templates/${ref.split("/").slice(0, 2).map(seg).join("/")}`;
}

const submission = (args: CommunityArgs, suffix = "") => {
  need(args, args.action, "snapshot_id");
  return `/v1/community/submissions/${seg(args.snapshot_id!)}${suffix}`;
};
const upgradePath = (args: CommunityArgs, suffix = "") => {
  need(args, args.action, "app_id");
  return `/v1/apps/${seg(args.app_id!)}/upgrade${suffix}`;
};
const reviewPath = (args: ReviewArgs, suffix: string) => {
  need(args, args.action, "review_id");
  return `/v1/reviews/${seg(args.review_id!)}${suffix}`;
};

export const communityTools: ToolDef[] = [
  defineTool({
    name: "community", annotations: hints("Community Templates", "F", "T", "F", "T"),
    description: "Community templates: publish an app as a template, unpublish, get_config_contract and install (ref <handle>/<slug> or a snapshot id), upgrade_check / upgrade / revert an installed app, and operator review (list_pending, get_submission, approve, reject, set_trust_level).",
    input: communityInput,
    run: byAction<CommunityArgs>("community", {
      publish: (args, host) => {
        need(args, "publish", "app_id");
        const { action: _action, ref: _ref, config: _config, ...fields } = args;
        return relay(host, { method: "POST", path: "/v1/community/publish", body: present(fields) });
      },
      unpublish: (args, host) => relay(host, { method: "POST", path: submission(args, "/unpublish") }),
      get_config_contract: (args, host) => {
        need(args, "get_config_contract", "ref");
        return relay(host, { method: "GET", path: `${templatePath(args.ref!)}/config-contract` });
      },
      install: (args, host) => {
        need(args, "install", "ref");
        return relay(host, { method: "POST", path: `${templatePath(args.ref!)}/install`, body: args.config ? { config: args.config } : {} });
      },
      upgrade_check: (args, host) => relay(host, { method: "GET", path: upgradePath(args) }),
      upgrade: (args, host) => relay(host, {
        method: "POST", path: upgradePath(args), body: present({ accept_permissions: args.accept_permissions === true ? true : undefined, expect_version: args.expect_version }),
      }),
      revert: (args, host) => relay(host, { method: "POST", path: upgradePath(args, "/revert"), body: {} }),
      list_pending: (args, host) => relay(host, { method: "GET", path: "/v1/community/pending", query: { limit: args.limit, cursor: args.cursor } }),
      get_submission: (args, host) => relay(host, { method: "GET", path: submission(args) }),
      approve: (args, host) => relay(host, { method: "POST", path: submission(args, "/approve") }),
      reject: (args, host) => {
        need(args, "reject", "snapshot_id", "note");
        return relay(host, { method: "POST", path: submission(args, "/reject"), body: { note: args.note } });
      },
      set_trust_level: (args, host) => {
        need(args, "set_trust_level", "handle", "trust_level");
        return relay(host, { method: "POST", path: `/v1/community/publishers/${seg(args.handle!)}/trust`, body: { trust_level: args.trust_level } });
      },
    }),
  }),
  defineTool({
    name: "publisher", annotations: hints("Publisher Profile", "F", "F", "F", "T"),
    description: "Your public publisher identity: get, claim (handle; permanent), update (display_name, bio, url; null clears). Claim and update need a verified email.",
    input: publisherInput,
    run: byAction<PublisherArgs>("publisher", {
      get: (_args, host) => relay(host, { method: "GET", path: "/v1/publisher" }),
      claim: (args, host) => {
        need(args, "claim", "handle");
        return relay(host, { method: "POST", path: "/v1/publisher/claim", body: { handle: args.handle } });
      },
      update: (args, host) => {
        if (args.display_name === undefined && args.bio === undefined && args.url === undefined) need(args, "update", "display_name");
        return relay(host, { method: "POST", path: "/v1/publisher/update", body: present({ display_name: args.display_name, bio: args.bio, url: args.url }) });
      },
    }),
  }),
  defineTool({
    name: "review", annotations: hints("Community Reviews", "F", "T", "F", "T"),
    description: "Template reviews: create (stars, template or handle + slug, body), respond (review_id, response; null clears), report (review_id, reason), and operator remove / unhold.",
    input: reviewInput,
    run: byAction<ReviewArgs>("review", {
      create: (args, host) => {
        need(args, "create", "stars");
        if (args.template === undefined) need(args, "create", "handle", "slug");
        return relay(host, { method: "POST", path: "/v1/reviews", body: present({ template: args.template, handle: args.handle, slug: args.slug, stars: args.stars, body: args.body }) });
      },
      respond: (args, host) => relay(host, { method: "POST", path: reviewPath(args, "/respond"), body: { response: args.response ?? null } }),
      report: (args, host) => {
        need(args, "report", "review_id", "reason");
        return relay(host, { method: "POST", path: reviewPath(args, "/report"), body: { reason: args.reason } });
      },
      remove: (args, host) => relay(host, { method: "POST", path: reviewPath(args, "/remove") }),
      unhold: (args, host) => relay(host, { method: "POST", path: reviewPath(args, "/unhold") }),
    }),
  }),
];
