// `service template publish <app>`: publish an app you own as a template submission
// (POST /v1/community/publish). The live version is snapshotted; example rows of the
// app's seedOnInstall collections go with it only with --attest-example-only. --tags and
// --setup-steps take inline JSON, @file, a file path or - (stdin). Prints the relay's
// answer: { snapshot_id, review_status, …, expedited, auto_approved }.
import { boolFlag, stringFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "../apps/common.ts";
import { jsonFlag } from "../credentials/common.ts";

const TEXT_FLAGS = [
  { flag: "title", field: "title", description: "the gallery title (1..80 characters; default: the app's name)" },
  { flag: "description", field: "description", description: "one line (at most 200 characters)" },
  { flag: "long-description", field: "long_description", description: "the full description (at most 4000 characters)" },
  { flag: "category", field: "category", description: "a gallery category" },
  { flag: "slug", field: "slug", description: "the template's slug: installs as <handle>/<slug> (3..48 lowercase letters, digits, hyphens)" },
  { flag: "version", field: "version", description: "semver, default 1.0.0; a republish of a slug must be greater" },
  { flag: "changelog-note", field: "changelog_note", description: "what changed in this version" },
] as const;

export const templatePublish: Command = {
  noun: "template",
  verb: "publish",
  summary: "publish an app you own as a template (pending an operator's review)",
  description: "Seed rows are copied only with --attest-example-only, and only from collections marked\nseedOnInstall (never the settings collection). Members, grants, credentials, connections and\nsecrets are never copied.",
  flags: [
    ...TEXT_FLAGS.map(({ flag, description }) => ({ name: flag, kind: "string" as const, value: "<text>", description })),
    { name: "tags", kind: "string", value: "<path|json>", description: "a JSON array of up to 6 tags" },
    { name: "setup-steps", kind: "string", value: "<path|json>", description: "a JSON array of up to 20 setup steps (kind, label, key, …)" },
    { name: "attest-example-only", kind: "boolean", description: "the rows of seedOnInstall collections are example data and may become public" },
  ],
  args: [APP_ARG],
  examples: [
    "service template publish todo --slug todo --title \"Team todo\" --attest-example-only",
    "service template publish todo --slug todo --version 1.1.0 --changelog-note \"Due dates\" --setup-steps steps.json",
  ],
  skillCheck: true,
  async run(ctx) {
    const body: Record<string, unknown> = {};
    for (const { flag, field } of TEXT_FLAGS) {
      const value = stringFlag(ctx.flags, flag);
      if (value !== undefined) body[field] = value;
    }
    const tags = await jsonFlag(ctx, "tags");
    if (tags !== undefined) body.tags = tags;
    const steps = await jsonFlag(ctx, "setup-steps");
    if (steps !== undefined) body.setup_steps = steps;
    if (boolFlag(ctx.flags, "attest-example-only")) body.attest_example_only = true;
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("POST", "/v1/community/publish", { auth: t.auth, body: { app_id: t.app.id, ...body } }));
  },
};
