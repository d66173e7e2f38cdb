// Writing a command's result to the file named by --out, with one catalogue error when the
// file cannot be written: shared by every command that offers --out.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { CliError } from "./errors.ts";

/** Writes `bytes` to `out` and answers the absolute path written. */
export function writeOutFile(out: string, bytes: Uint8Array | string): string {
  try {
    writeFileSync(out, bytes);
  } catch (err) {
    throw new CliError("write_failed", `Could not write ${out}: ${(err as Error).message}`, { hint: "Check that the directory exists and is writable." });
  }
  return path.resolve(out);
}
