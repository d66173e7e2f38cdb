// failed() (src/mcp/results.ts): how a tool's throw reaches the MCP caller. A catalogue
// error keeps its code and message; anything else is `internal` with a fixed sentence, so
// a failed query's statement and bound values never leave the relay.
import { DrizzleQueryError } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { failed } from "../../../src/mcp/results";
import { RelayError } from "../../../src/errors";

const SECRET = "svc_0123456789abcdef0123456789abcdef";

function bodyOf(result: ReturnType<typeof failed>): Record<string, unknown> {
  const text = (result.content[0] as { text: string }).text;
  return JSON.parse(text) as Record<string, unknown>;
}

describe("MCP tool failures", () => {
  it("an unexpected throw is internal, without its text", () => {
    const query = new DrizzleQueryError("update agents set key_hash = ?", [SECRET], new Error("D1_ERROR: disk I/O error"));
    const result = failed(query);
    expect(result.isError).toBe(true);
    const body = bodyOf(result);
    expect(body.error).toBe("internal");
    expect(JSON.stringify(body)).not.toContain(SECRET);
    expect(JSON.stringify(body)).not.toContain("update agents");
  });

  it("a catalogue error keeps its code and message", () => {
    const body = bodyOf(failed(new RelayError("app_not_found", "No app app_x.")));
    expect(body.error).toBe("app_not_found");
    expect(body.message).toBe("No app app_x.");
  });
});
