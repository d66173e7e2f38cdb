// What the `connections` verbs share (spec C: every one takes `--app <id|slug>`): the
// required flags, the app resolved to an id (WIRE §1.5), the connections path, the name
// grammar the relay enforces (checked here too, so a typo never builds a dead link), and
// secrets read from a flag (`-` for stdin) or their SERVICE_CONNECTION_* variable.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { secretValue } from "../../input.ts";
import type { FlagSpec } from "../../argv.ts";
import type { CommandContext } from "../types.ts";
import type { Target } from "../apps/common.ts";

export { APP_FLAG, appTarget, requiredFlag } from "../credentials/common.ts";

export const NAME_FLAG: FlagSpec = { name: "name", kind: "string", value: "<name>", description: "the connection's name (required)" };

/** spec A: lowercase, starting with a letter or digit, then `_` and `-` too, at most 64 characters. */
const CONNECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** --name, checked against the relay's grammar. */
export function connectionName(ctx: CommandContext): string {
  const name = stringFlag(ctx.flags, "name")?.trim();
  if (!name) throw invalidArgs(`\`${ctx.command}\` needs --name.`, ctx.command, { flag: "--name" });
  if (!CONNECTION_NAME.test(name)) {
    throw invalidArgs(`--name must be lowercase letters, digits, _ or -, starting with a letter or digit, at most 64 characters; got ${JSON.stringify(name.slice(0, 80))}.`, ctx.command, { flag: "--name" });
  }
  return name;
}

/** `/v1/apps/<id>/connections[/<name>]`. */
export function connectionsPath(t: Target, name?: string): string {
  return `${t.path}/connections${name === undefined ? "" : `/${encodeURIComponent(name)}`}`;
}

/**
 * A secret for `--<flag>`: the flag's value (`-` reads stdin; a literal works but warns),
 * else the environment variable `envName`; undefined when neither is given.
 */
export async function secretFlag(ctx: CommandContext, flag: string, envName: string, what: string): Promise<string | undefined> {
  const value = stringFlag(ctx.flags, flag);
  if (value !== undefined) return secretValue(ctx, value, what, `use \`--${flag} -\` with the value on stdin, or set ${envName}.`);
  const fromEnv = ctx.env[envName]?.trim();
  return fromEnv ? fromEnv : undefined;
}
