// `service feedback create --type bug|feature|note --message <text|-> [--app-id <app>]`:
// file feedback about the relay itself (POST /v1/feedback). `--message -` reads the text
// from stdin. The relay trims the message (1..4000 characters) and answers { id, type,
// created_at } without echoing it.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { stdinText } from "../../text-input.ts";
import type { Command } from "../types.ts";
import { oneOf, session } from "../apps/common.ts";
import { requiredFlag } from "../credentials/common.ts";

export const FEEDBACK_TYPES = ["bug", "feature", "note"];

export const feedbackCreate: Command = {
  noun: "feedback",
  verb: "create",
  summary: "tell the relay's maintainers about a bug, a missing feature or anything else",
  description: "Say which surface (cli, relay, page script), the command or route, what you expected and what\nhappened (the exact error code and message). There is no reply channel; `feedback list` shows\nwhat you filed.",
  flags: [
    { name: "type", kind: "string", value: "bug|feature|note", description: "what kind of feedback (required)" },
    { name: "message", kind: "string", value: "<text|->", description: "the message, or - to read it from stdin (required)" },
    { name: "app-id", kind: "string", value: "<app>", description: "the app (id or slug) the feedback is about" },
  ],
  args: [],
  examples: ['service feedback create --type bug --message "apps watch stops after 25 s"', "service feedback create --type feature --message - < idea.md"],
  skillCheck: true,
  async run(ctx) {
    const type = oneOf(ctx, "type", FEEDBACK_TYPES);
    if (type === undefined) throw invalidArgs("`service feedback create` needs --type bug, feature or note.", ctx.command, { flag: "--type" });
    const given = requiredFlag(ctx, "message");
    const message = (given === "-" ? await stdinText(ctx, "message") : given).trim();
    if (message === "") throw invalidArgs("The message is empty.", ctx.command, { flag: "--message" });
    const appId = stringFlag(ctx.flags, "app-id");
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", "/v1/feedback", { auth: s.auth, body: { type, message, ...(appId !== undefined ? { app_id: appId } : {}) } }));
  },
};
