// `service taste set --file <path|->`: replace your taste notes whole (PUT /v1/taste) with
// a file's text, stdin (`-`), or whatever is piped in when --file is left out. Blank text
// is refused here before any call; the relay caps the size (MAX_TASTE_BYTES).
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { fileOrStdin, pipedStdin } from "../../text-input.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

export const tasteSet: Command = {
  noun: "taste",
  verb: "set",
  summary: "replace your taste notes with a file's text (--file <path>), stdin (--file -) or piped stdin",
  description: "The notes are freeform markdown about the UI your human likes. They replace what was there;\n`service taste clear --yes` removes them.",
  flags: [{ name: "file", kind: "string", value: "<path|->", description: "the notes file, or - for stdin (default: piped stdin)" }],
  args: [],
  examples: ["service taste set --file taste.md", "cat taste.md | service taste set"],
  skillCheck: true,
  async run(ctx) {
    const text = (await fileOrStdin(ctx, "file", stringFlag(ctx.flags, "file"))) ?? (await pipedStdin(ctx));
    if (text === undefined) throw invalidArgs("`service taste set` needs --file <path>, --file -, or text piped in.", ctx.command, { flag: "--file" });
    if (text.trim() === "") throw invalidArgs("The taste notes are empty; to remove them run `service taste clear --yes`.", ctx.command, { flag: "--file" });
    const s = session(ctx);
    ctx.out.json(await s.relay.object("PUT", "/v1/taste", { auth: s.auth, body: { taste: text } }));
  },
};
