// errorLogLine (src/db/query-errors.ts): what a log line keeps of a thrown value. A failed
// D1 statement's error lists the values bound to it, and some are secrets; the line keeps
// the name, message and code of the error and its causes, and never the values.
import { DrizzleQueryError } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { errorLogLine } from "../../../src/db/query-errors";

const SECRET = "whsec_do-not-log-me";

describe("errorLogLine", () => {
  it("a failed drizzle query keeps its SQL and its driver's error, and loses the bound values", () => {
    const driver = Object.assign(new Error("D1_ERROR: UNIQUE constraint failed: webhooks.app_id"), { code: "SQLITE_CONSTRAINT" });
    const failed = new DrizzleQueryError("insert into webhooks (app_id, secret) values (?, ?)", ["app_1", SECRET], driver);
    expect(failed.message).toContain(SECRET);
    const line = errorLogLine(failed);
    expect(line).toBe(
      "DrizzleQueryError: Failed query: insert into webhooks (app_id, secret) values (?, ?) <- caused by Error: D1_ERROR: UNIQUE constraint failed: webhooks.app_id [code SQLITE_CONSTRAINT]",
    );
    expect(line).not.toContain("params");
  });

  it("a drizzle-like error of another copy of the library, or one wrapped as a cause, loses its params too", () => {
    const lookalike = Object.assign(new Error(`Failed query: update apps set secret = ?\nparams: ${SECRET},app_1`), { name: "DrizzleQueryError", params: [SECRET] });
    expect(errorLogLine(lookalike)).toBe("DrizzleQueryError: Failed query: update apps set secret = ?");
    const wrapped = new Error("rotation failed", { cause: new DrizzleQueryError("update apps set secret = ?", [SECRET]) });
    const line = errorLogLine(wrapped);
    expect(line).toBe("Error: rotation failed <- caused by DrizzleQueryError: Failed query: update apps set secret = ?");
    expect(line).not.toContain(SECRET);
  });

  it("any thrown value becomes one line: no stack, no other fields", () => {
    const coded = Object.assign(new TypeError("bad\nthing"), { code: 42, body: SECRET });
    const line = errorLogLine(coded);
    expect(line).toBe("TypeError: bad thing [code 42]");
    expect(errorLogLine("plain text")).toBe("plain text");
    expect(errorLogLine(undefined)).toBe("a thrown undefined");
    expect(errorLogLine(null)).toBe("a thrown null");
    expect(errorLogLine({ token: SECRET })).toBe("a thrown object");
  });
});
