// What the `ingest` verbs share (spec C: each takes `--app <id|slug>`, all but list take
// `--name`): the hook name checked against the manifest grammar before any call, and the
// path of one hook under `/v1/apps/<id>/ingest-hooks`.
import type { FlagSpec } from "../../argv.ts";
import type { Target } from "../apps/common.ts";

export { APP_FLAG, appTarget } from "../credentials/common.ts";

export const NAME_FLAG: FlagSpec = { name: "name", kind: "string", value: "<name>", description: "the hook's name, as in the manifest's ingest rule (required)" };

/** --name, checked before any call: a hook name has the grammar of a connection name (WIRE §5.5 ingest, `[a-z0-9][a-z0-9_-]{0,63}`). */
export { connectionName as hookName } from "../connections/common.ts";

/** `/v1/apps/<id>/ingest-hooks/<name>`. */
export function hookPath(t: Target, name: string): string {
  return `${t.path}/ingest-hooks/${encodeURIComponent(name)}`;
}
