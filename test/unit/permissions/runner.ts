// Runs one matrix cell through the real engine and reduces the answer to the same string
// the oracle produces: "ok", "ok:seen"/"ok:unseen" for a list, or the error code. A
// scenario the manifest refuses reduces to the manifest's own error code.
import { RelayError } from "../../../src/errors";
import { authorize, type RowContext } from "../../../src/permissions";
import { compileCached, PRINCIPALS, rowFor, type PrincipalName, type Variant } from "./fixtures";
import { scenario, type Verb } from "./oracle";

export function run(verb: Verb, subject: string, name: PrincipalName, v: Variant): string {
  const tasks = scenario(verb, subject);
  if (!tasks) return "refused by the manifest";
  const m = compileCached(tasks);
  const p = PRINCIPALS[name];
  const row: RowContext = rowFor(p, v);
  const collection = "tasks";
  const d = (() => {
    switch (verb) {
      case "list":
        return authorize(m, p, "list", { collection });
      case "count":
        return authorize(m, p, "count", { collection });
      case "get":
        return authorize(m, p, "get", { collection, row });
      case "create":
        return authorize(m, p, "create", { collection, key: "row1", data: row.data });
      case "update":
      case "updateHidden":
        return authorize(m, p, "update", { collection, row, data: row.data });
      case "delete":
      case "deleteHidden":
        return authorize(m, p, "delete", { collection, row });
      case "purge":
        return authorize(m, p, "purge", { collection, row });
      case "restore":
        return authorize(m, p, "restore", { collection, row });
      case "listDeleted":
        return authorize(m, p, "listDeleted", { collection });
    }
  })();
  if (!d.ok) {
    if (!(d.error instanceof RelayError) || d.error.code !== d.code) throw new Error(`refusal ${d.code} does not carry its RelayError`);
    return d.code;
  }
  if ("canRead" in d) return (d.canRead as (r: RowContext) => boolean)(row) ? "ok:seen" : "ok:unseen";
  return "ok";
}

/** The manifest refuses a row-scoped subject in write and countRead. */
export function refusedByManifest(verb: Verb, subject: string): string | null {
  if (scenario(verb, subject)) return null;
  try {
    compileCached(verb === "count" ? { countRead: [subject] } : { read: ["anyone"], write: [subject], update: ["owner"] });
  } catch (err) {
    if (err instanceof RelayError) return err.code;
    throw err;
  }
  return "compiled";
}
