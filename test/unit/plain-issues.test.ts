// The translator from zod issues to plain words (src/http/plain-issues.ts), one schema per
// kind of issue: each refusal names the field by its path and says what is wrong in the
// field's own terms, and a schema's own message (refine, regex) is kept as written.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseWith, type RequestPart } from "../../src/http/plain-issues";
import { RelayError } from "../../src/errors";

/** The message and details of the invalid_request `schema` answers to `value`. */
function refusal(schema: z.ZodType, value: unknown, part: RequestPart = "body", at: PropertyKey[] = []) {
  try {
    parseWith(schema, value, part, at);
  } catch (err) {
    if (err instanceof RelayError && err.code === "invalid_request") return { message: err.message, details: err.details };
    throw err;
  }
  throw new Error("expected a refusal");
}

/** The message for field `f` holding `value` (left out when undefined). */
const one = (schema: z.ZodType, value: unknown) => refusal(z.strictObject({ f: schema }), value === undefined ? {} : { f: value }).message;

describe("plain words for each kind of zod issue", () => {
  it.each([
    ["a missing field", z.string(), undefined, "f is required"],
    ["a missing field of any value", z.unknown(), undefined, "f is required"],
    ["a wrong type", z.string(), 3, "f must be a string, not a number"],
    ["null where an object goes", z.object({}), null, "f must be an object, not null"],
    ["a record given an array", z.record(z.string(), z.unknown()), [], "f must be an object, not an array"],
    ["a boolean given a string", z.boolean(), "yes", "f must be true or false, not a string"],
    ["a fraction for an integer", z.number().int(), 1.5, "f must be a whole number"],
    ["a long string", z.string().max(128), "x".repeat(129), "f must be at most 128 characters"],
    ["an empty string", z.string().min(1), "", "f must not be empty"],
    ["a short string", z.string().min(3), "ab", "f must be at least 3 characters"],
    ["an exact length", z.string().length(4), "abc", "f must be exactly 4 characters"],
    ["a long list", z.array(z.number()).max(2), [1, 2, 3], "f must have at most 2 items"],
    ["an empty list", z.array(z.number()).min(1), [], "f must not be empty"],
    ["a large number", z.number().max(30), 31, "f must be at most 30"],
    ["a number not below a bound", z.number().lt(30), 30, "f must be less than 30"],
    ["a small number", z.number().min(1), 0, "f must be at least 1"],
    ["a number not above a bound", z.number().gt(0), 0, "f must be greater than 0"],
    ["a value outside an enum", z.enum(["private", "link", "public"]), "secret", "f must be one of private, link, public"],
    ["a literal", z.literal("own"), "all", "f must be own"],
    ["an email", z.email(), "nobody", "f must be an email address"],
    ["a pattern", z.string().regex(/^[a-z]+$/), "A", "f must match /^[a-z]+$/"],
    ["a prefix", z.string().startsWith("svc_"), "key", 'f must start with "svc_"'],
    ["a multiple", z.number().multipleOf(5), 7, "f must be a multiple of 5"],
    ["a union of kinds", z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]), {}, "f must be a string, a number, a boolean or an array, not an object"],
    ["a refine's own message", z.string().refine((s) => s !== "x", "must not be x"), "x", "f must not be x"],
    ["a regex's own message", z.string().regex(/^\d+$/, "must be digits only"), "a", "f must be digits only"],
  ])("%s", (_name, schema, value, message) => {
    expect(one(schema, value)).toBe(message);
  });

  it("an unknown field names the object it is in, and details.field names the field", () => {
    expect(refusal(z.strictObject({}), { colour: 1 })).toEqual({
      message: 'the body takes no field "colour"',
      details: { field: "colour", issues: [{ field: "colour", message: 'the body takes no field "colour"' }] },
    });
    expect(refusal(z.strictObject({}), { a: 1, b: 2 }).message).toBe('the body takes no fields "a", "b"');
    expect(refusal(z.strictObject({ pin: z.strictObject({}) }), { pin: { x: 1 } }).details?.field).toBe("pin.x");
  });

  it("the root of the value is the part it came from", () => {
    expect(refusal(z.object({}), [], "body").message).toBe("the body must be an object, not an array");
    expect(refusal(z.object({}).refine(() => false, "must name something"), {}, "query").message).toBe("the query must name something");
  });

  it("a union the value fits one option of reports that option's problem at its full path", () => {
    const asset = z.union([z.strictObject({ path: z.string().max(3), data: z.string() }), z.strictObject({ path: z.string(), id: z.string() })]);
    expect(refusal(z.strictObject({ assets: z.array(asset) }), { assets: [{ path: "long", data: "x" }] }).message).toBe("assets.0.path must be at most 3 characters");
  });

  it("a value placed inside the request is named from the request's root", () => {
    expect(refusal(z.strictObject({ key: z.string().max(2) }), { key: "abc" }, "body", ["rows", 3])).toEqual({
      message: "rows.3.key must be at most 2 characters",
      details: { field: "rows.3.key", issues: [{ field: "rows.3.key", message: "rows.3.key must be at most 2 characters" }] },
    });
  });

  it("several problems: the first is the message, the count of the rest follows", () => {
    const r = refusal(z.strictObject({ a: z.string(), b: z.string(), c: z.string() }), { c: "x" });
    expect(r.message).toBe("a is required (and 1 more problem in details.issues)");
    const r2 = refusal(z.strictObject({ a: z.string(), b: z.string(), c: z.string() }), {});
    expect(r2.message).toBe("a is required (and 2 more problems in details.issues)");
    expect((r2.details?.issues as unknown[]).length).toBe(3);
  });
});
