/**
 * The `/__dev/*` paths exist only in development mode (CONTRACT §3); anywhere else they
 * answer exactly like a path that was never there.
 */
import { config } from "../../config";
import { RelayError } from "../../errors";
import type { AppContext } from "../types";

export function requireDevelopment(c: AppContext): void {
  if (!config(c.env).development) throw new RelayError("not_found", "Nothing exists at this path.");
}
