// `service publisher update --display-name|--bio|--website|--clear <field>`: edit your
// publisher profile (POST /v1/publisher/update). At least one flag; `--clear website`
// (repeatable) empties a field, a field left out stays as it is.
import { listFlag, stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

const FIELDS = [
  { flag: "display-name", field: "display_name" },
  { flag: "bio", field: "bio" },
  { flag: "website", field: "url" },
] as const;

export const publisherUpdate: Command = {
  noun: "publisher",
  verb: "update",
  summary: "edit display name, bio or website (--clear <field> empties one)",
  flags: [
    { name: "display-name", kind: "string", value: "<text>", description: "the name shown on your templates (at most 80 characters)" },
    { name: "bio", kind: "string", value: "<text>", description: "a few words about you (at most 500 characters)" },
    { name: "website", kind: "string", value: "<url>", description: "an http(s) address (at most 200 characters)" },
    { name: "clear", kind: "string", value: "display-name|bio|website", description: "empty this field (repeatable)", repeatable: true },
  ],
  args: [],
  examples: ['service publisher update --display-name "Acme Apps" --website https://acme.example.com', "service publisher update --clear bio"],
  skillCheck: true,
  async run(ctx) {
    const body: Record<string, string | null> = {};
    for (const cleared of listFlag(ctx.flags, "clear")) {
      const known = FIELDS.find((entry) => entry.flag === cleared);
      if (!known) throw invalidArgs(`--clear takes display-name, bio or website; got ${JSON.stringify(cleared)}.`, ctx.command, { flag: "--clear" });
      body[known.field] = null;
    }
    for (const { flag, field } of FIELDS) {
      const value = stringFlag(ctx.flags, flag);
      if (value === undefined) continue;
      if (field in body) throw invalidArgs(`--${flag} and --clear ${flag} contradict each other.`, ctx.command, { flag: `--${flag}` });
      body[field] = value;
    }
    if (Object.keys(body).length === 0) {
      throw invalidArgs("`service publisher update` needs at least one of --display-name, --bio, --website, --clear.", ctx.command, { flag: "--display-name" });
    }
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", "/v1/publisher/update", { auth: s.auth, body }));
  },
};
