// What the `ingest` verbs share (spec C: each takes `--app <id|slug>`, all but list take
// `--name`): the hook name checked against the manifest grammar before any call, and the
// path of one hook under `/v1/apps/<id>/ingest-hooks`.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { FlagSpec } from "../../argv.ts";
import type { CommandContext } from "../types.ts";
import type { Target } from "../apps/common.ts";

export { APP_FLAG, appTarget } from "../credentials/common.ts";

export const NAME_FLAG: FlagSpec = { name: "name", kind: "string", value: "<name>", description: "the hook's name, as in the manifest's ingest rule (required)" };

/** WIRE §5.5 ingest: `[a-z0-9][a-z0-9_-]{0,63}`. */
const HOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** --name, checked against the manifest's hook name grammar. */
export function hookName(ctx: CommandContext): string {
  const name = stringFlag(ctx.flags, "name")?.trim();
  if (!name) throw invalidArgs(`\`${ctx.command}\` needs --name.`, ctx.command, { flag: "--name" });
  if (!HOOK_NAME.test(name)) {
    throw invalidArgs(`--name must be lowercase letters, digits, _ or -, starting with a letter or digit, at most 64 characters; got ${JSON.stringify(name.slice(0, 80))}.`, ctx.command, { flag: "--name" });
  }
  return name;
}

/** `/v1/apps/<id>/ingest-hooks/<name>`. */
export function hookPath(t: Target, name: string): string {
  return `${t.path}/ingest-hooks/${encodeURIComponent(name)}`;
}
