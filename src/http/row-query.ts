/**
 * The `q` query parameter of the row list endpoints, read the same way by the agent door
 * (`GET /v1/apps/:id/collections/:name`) and the page door (`GET /_svc/c/:collection`):
 * URL-encoded JSON `{ where?, sort? }`. Only the shape is checked here; the AppStore
 * validates the conditions and the sort against the manifest.
 */
import { RelayError } from "../errors";

export function parseQ(raw: string | undefined): { where?: unknown; sort?: unknown } {
  if (raw === undefined || raw === "") return {};
  let q: unknown;
  try {
    q = JSON.parse(raw);
  } catch {
    throw new RelayError("invalid_request", "q must be URL-encoded JSON: { where?, sort? }.", { field: "q" });
  }
  if (typeof q !== "object" || q === null || Array.isArray(q)) throw new RelayError("invalid_request", "q must be a JSON object.", { field: "q" });
  const { where, sort, ...rest } = q as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new RelayError("invalid_request", `q: unknown key "${extra}"; q takes where and sort.`, { field: `q.${extra}` });
  return { where, sort };
}
