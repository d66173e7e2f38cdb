/**
 * zod shapes of the community publishing and review routes (WIRE §2.10): the publish
 * request with its setup steps and limits, and the SubmissionSummary / SubmissionDetail
 * answers. Kept apart from the route module so the routes read as parse → call → render.
 */
import * as z from "zod";
import { isSemver } from "../../community/semver";
import { TEMPLATE_SLUG_PATTERN } from "../../community/publish";
import { isoTime } from "./schemas";

export const SETUP_STEP_KINDS = ["config", "seed-data", "connect", "note", "upload"] as const;

const setupStep = z.strictObject({
  kind: z.enum(SETUP_STEP_KINDS),
  label: z.string().trim().min(1).max(80),
  description: z.string().max(300).optional(),
  required: z.boolean().optional(),
  secret: z.boolean().optional(),
  default: z.string().max(200).optional(),
  choices: z.array(z.string().min(1).max(200)).min(1).max(12).optional(),
  valueHint: z.string().max(120).optional(),
  key: z.string().trim().min(1).max(64).optional(),
  ingestRule: z.string().min(1).max(64).optional(),
}).superRefine((step, ctx) => {
  const keyed = step.kind === "config" || step.kind === "upload";
  if (step.kind === "upload" && step.key === undefined) ctx.addIssue({ code: "custom", path: ["key"], message: "is required for an upload step" });
  if (!keyed && step.key !== undefined) ctx.addIssue({ code: "custom", path: ["key"], message: `is only allowed on config and upload steps, not ${step.kind}` });
  if (step.kind !== "connect" && step.ingestRule !== undefined) ctx.addIssue({ code: "custom", path: ["ingestRule"], message: "is only allowed on connect steps" });
  if (step.default !== undefined && step.choices !== undefined && !step.choices.includes(step.default)) {
    ctx.addIssue({ code: "custom", path: ["default"], message: "must be one of choices" });
  }
});

export const publishBody = z.strictObject({
  app_id: z.string().min(1).max(200),
  title: z.string().trim().min(1).max(80).optional(),
  description: z.string().max(200).optional(),
  long_description: z.string().max(4000).optional(),
  category: z.string().trim().min(1).max(40).optional(),
  tags: z.array(z.string().trim().min(1).max(32)).max(6).optional(),
  slug: z.string().regex(TEMPLATE_SLUG_PATTERN, "must be 3 to 48 lowercase letters, digits or inner hyphens").optional(),
  version: z.string().refine(isSemver, "must be a semver version such as 1.0.0").optional(),
  changelog_note: z.string().max(2000).optional(),
  setup_steps: z.array(setupStep).max(20).superRefine((steps, ctx) => {
    const seen = new Set<string>();
    steps.forEach((step, index) => {
      if (step.key === undefined) return;
      if (seen.has(step.key)) ctx.addIssue({ code: "custom", path: [index, "key"], message: `repeats the key "${step.key}"` });
      seen.add(step.key);
    });
  }).optional(),
  derived_from_snapshot_id: z.string().min(1).max(64).optional(),
  attest_example_only: z.boolean().optional(),
});

export const publishAnswer = z.object({
  snapshot_id: z.string(), review_status: z.enum(["pending", "approved", "rejected"]), name: z.string(),
  seeded_row_count: z.number().int(), slug: z.string().nullable(), version: z.string(), setup_step_count: z.number().int(),
  attest_example_only: z.boolean().nullable(), expedited: z.boolean(), auto_approved: z.boolean(),
});

export const submissionSummary = z.object({
  snapshot_id: z.string(), name: z.string(), description: z.string().nullable(), long_description: z.string().nullable(),
  category: z.string().nullable(), tags: z.array(z.string()), review_status: z.enum(["pending", "approved", "rejected"]),
  publisher_human_id: z.string(), publisher_name: z.string().nullable(), source_app_id: z.string(),
  seeded_row_count: z.number().int(), published_at: isoTime, slug: z.string().nullable(), version: z.string(),
  attest_example_only: z.boolean().nullable(), expedited: z.boolean(), publisher_trust_level: z.enum(["new", "established"]),
});

export const submissionDetail = submissionSummary.extend({
  html: z.string(), manifest: z.record(z.string(), z.unknown()),
  seed_rows: z.record(z.string(), z.array(z.object({ key: z.string(), data: z.unknown() }))),
  seed_summary: z.object({
    collections: z.array(z.object({ collection: z.string(), row_count: z.number().int(), bytes: z.number().int() })),
    total_rows: z.number().int(), total_bytes: z.number().int(),
  }),
  version_id: z.string(), reviewed_at: isoTime.nullable(), review_note: z.string().nullable(), superseded_at: isoTime.nullable(),
  unpublished_at: isoTime.nullable(), changelog: z.string().nullable(), license: z.string().nullable(), license_terms: z.string().nullable(),
  derived_from_snapshot_id: z.string().nullable(),
  setup_steps: z.array(z.record(z.string(), z.unknown())),
  external_destinations: z.array(z.object({
    kind: z.enum(["webhook", "embed", "fetch"]), host: z.string(), fromSetting: z.string().optional(), viaConnection: z.string().optional(),
  })),
});
