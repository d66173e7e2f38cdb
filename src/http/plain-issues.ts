/**
 * The one translator from zod's issues to the relay's own words. zod's default messages
 * ("Invalid input: expected string, received undefined", "Too big: expected string to
 * have <=128 characters") describe the library, not the request. Every request body and
 * query string is parsed here instead, with `plainPredicate` as the error map, so each
 * problem reads like the rest of the catalogue: the field's own name, then what is wrong
 * with it ("name is required", "visibility must be one of private, link, public").
 *
 * Messages a schema gives itself (a `refine`, a `regex` with its own text) take
 * precedence over the map in zod, so they are written the same way: a predicate that
 * follows the field's name ("must not contain control characters").
 */
import type * as z from "zod";
import { RelayError, type ErrorCode } from "../errors";
import { jsonKind } from "../json-kind";

/** Which part of the request a schema reads. Its name stands in for the root of the value. */
export type RequestPart = "body" | "query";

export interface PlainIssue {
  /** The dotted path of the offending field (`rows.3.key`), or the part itself for its root. */
  field: string;
  /** The whole sentence: the field, then what is wrong with it. */
  message: string;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string", number: "a number", int: "a whole number", bigint: "a whole number", boolean: "true or false",
  null: "null", array: "an array", tuple: "an array", set: "an array", object: "an object", record: "an object",
  map: "an object", date: "a date", file: "a file",
};

function typeName(expected: string, inList = false): string {
  if (inList && expected === "boolean") return "a boolean";
  return TYPE_NAMES[expected] ?? `a ${expected}`;
}

/** "a, b or c". */
function either(names: string[]): string {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

function listOfValues(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v) ?? String(v))).join(", ");
}

/**
 * The kinds of value a failed union would have taken, when every option refused the value
 * for its type alone ("a string, a number, a boolean or an array"); null when an option
 * refused something inside the value, which a list of kinds cannot say.
 */
function unionKinds(options: readonly (readonly z.core.$ZodIssue[])[]): string[] | null {
  const kinds: string[] = [];
  for (const option of options) {
    if (option.length !== 1 || option[0].path.length > 0) return null;
    const only = option[0];
    if (only.code === "invalid_type") kinds.push(typeName(only.expected, true));
    else if (only.code === "invalid_value") kinds.push(...only.values.map((v) => listOfValues([v])));
    else if (only.code === "invalid_union" && only.errors.length > 0) {
      const inner = unionKinds(only.errors);
      if (!inner) return null;
      kinds.push(...inner);
    } else return null;
  }
  return [...new Set(kinds)];
}

function sizeWords(origin: string, bound: number | bigint, unitless: string): string {
  if (origin === "string") return `${bound} character${bound === 1 ? "" : "s"}`;
  if (origin === "array" || origin === "set") return `${bound} item${bound === 1 ? "" : "s"}`;
  if (origin === "file") return `${bound} bytes`;
  return unitless;
}

function tooBig(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooBig>): string {
  const { origin, maximum, inclusive, exact } = issue;
  if (origin === "date") return `must be no later than ${new Date(Number(maximum)).toISOString()}`;
  const counted = origin === "string" || origin === "array" || origin === "set" || origin === "file";
  const amount = sizeWords(origin, maximum, String(maximum));
  if (exact) return counted && origin !== "string" ? `must have exactly ${amount}` : `must be exactly ${amount}`;
  if (!counted) return inclusive ? `must be at most ${maximum}` : `must be less than ${maximum}`;
  return origin === "string" ? `must be at most ${amount}` : `must have at most ${amount}`;
}

function tooSmall(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall>): string {
  const { origin, minimum, inclusive, exact } = issue;
  if (origin === "date") return `must be no earlier than ${new Date(Number(minimum)).toISOString()}`;
  const counted = origin === "string" || origin === "array" || origin === "set" || origin === "file";
  if (counted && Number(minimum) === 1 && !exact) return "must not be empty";
  const amount = sizeWords(origin, minimum, String(minimum));
  if (exact) return counted && origin !== "string" ? `must have exactly ${amount}` : `must be exactly ${amount}`;
  if (!counted) return inclusive ? `must be at least ${minimum}` : `must be greater than ${minimum}`;
  return origin === "string" ? `must be at least ${amount}` : `must have at least ${amount}`;
}

const FORMATS: Record<string, string> = {
  email: "an email address", url: "a URL", datetime: "an ISO 8601 date and time", date: "a date (YYYY-MM-DD)",
  time: "a time (HH:MM[:SS])", duration: "an ISO 8601 duration", uuid: "a UUID", base64: "base64", base64url: "base64url",
};

function badFormat(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidStringFormat>): string {
  const extra = issue as Record<string, unknown>;
  switch (issue.format) {
    case "regex": return `must match ${issue.pattern}`;
    case "starts_with": return `must start with "${String(extra.prefix)}"`;
    case "ends_with": return `must end with "${String(extra.suffix)}"`;
    case "includes": return `must contain "${String(extra.includes)}"`;
    default: return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
  }
}

function wrongType(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidType>): string {
  const { expected, input } = issue;
  if (input === undefined || expected === "nonoptional") return "is required";
  if (expected === "never" || expected === "undefined" || expected === "void") return "must be left out";
  if (typeof input === "number" && (!Number.isFinite(input) || expected === "int" || expected === "bigint")) return `must be ${typeName(expected)}`;
  return `must be ${typeName(expected)}, not ${jsonKind(input)}`;
}

/**
 * zod's error map for every parse of a request: what is wrong, as a predicate that follows
 * the field's name. The field itself is added by `plainIssue`, once the whole path is known.
 */
export function plainPredicate(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type": return wrongType(issue);
    case "too_big": return tooBig(issue);
    case "too_small": return tooSmall(issue);
    case "invalid_format": return badFormat(issue);
    case "not_multiple_of": return `must be a multiple of ${issue.divisor}`;
    case "invalid_value":
      return issue.values.length === 1 ? `must be ${listOfValues(issue.values)}` : `must be one of ${listOfValues(issue.values)}`;
    case "unrecognized_keys":
      return issue.keys.length === 1 ? `takes no field "${issue.keys[0]}"` : `takes no fields ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    case "invalid_union": {
      if (issue.inclusive === false) return "matches more than one of the accepted forms";
      const kinds = unionKinds(issue.errors);
      return kinds ? `must be ${either(kinds)}, not ${jsonKind(issue.input)}` : "does not match any of the accepted forms";
    }
    case "invalid_key": return "has a key that is not allowed";
    case "invalid_element": return "has an entry that is not allowed";
    default: return "is not valid";
  }
}

/**
 * A failed union says only that nothing fitted. When the value fits exactly one option at
 * the union's own level (every other option refuses it there: a wrong type, a key it does
 * not take), that option's issues say what is wrong inside it, so they stand in for the union's.
 */
function narrowUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== "invalid_union") return [issue];
  const fitting = issue.errors.filter((option) => option.every((i) => i.path.length > 0));
  if (fitting.length !== 1) return [issue];
  return fitting[0].flatMap((i) => narrowUnion({ ...i, path: [...issue.path, ...i.path] }));
}

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

/** One issue in plain words with its path: `{ field: "name", message: "name must be at most 128 characters" }`. */
export function plainIssue(issue: z.core.$ZodIssue, part: RequestPart): PlainIssue {
  const subject = issue.path.length > 0 ? dotted(issue.path) : `the ${part}`;
  const unknownKey = issue.code === "unrecognized_keys" && issue.keys.length === 1 ? [issue.keys[0]] : [];
  return { field: dotted([...issue.path, ...unknownKey]) || part, message: `${subject} ${issue.message}` };
}

/**
 * The `invalid_request` (or the route's own code, such as `connection_invalid`) for a value
 * a schema refused: the first problem as its message, every problem in details.
 */
export function invalidRequest(issues: readonly z.core.$ZodIssue[], part: RequestPart, code: ErrorCode = "invalid_request"): RelayError {
  const plain = issues.flatMap(narrowUnion).map((issue) => plainIssue(issue, part));
  const first = plain[0] ?? { field: part, message: `the ${part} is not valid` };
  const more = plain.length - 1;
  const message = more > 0 ? `${first.message} (and ${more} more problem${more === 1 ? "" : "s"} in details.issues)` : first.message;
  return new RelayError(code, message, { field: first.field, issues: plain });
}

/**
 * Parses `value` with `schema`, or throws the `invalid_request` naming what is wrong.
 * `at` places the value inside the request (a batch element is `["rows", 3]`), so its
 * fields are named from the request's root.
 */
export function parseWith<T extends z.ZodType>(
  schema: T, value: unknown, part: RequestPart, at: readonly PropertyKey[] = [], code: ErrorCode = "invalid_request",
): z.infer<T> {
  const result = schema.safeParse(value, { error: plainPredicate });
  if (result.success) return result.data;
  throw invalidRequest(result.error.issues.map((issue) => ({ ...issue, path: [...at, ...issue.path] })), part, code);
}
