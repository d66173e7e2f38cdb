/**
 * What kind of JSON value something is, in the words an error message uses ("an array",
 * "a string", "null"). Shared by the manifest readers and the request-body messages, so a
 * wrong type is described the same way wherever it is refused.
 */

export function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string": return "a string";
    case "number": return "a number";
    case "boolean": return value ? "true" : "false";
    case "object": return "an object";
    case "undefined": return "nothing";
    default: return `a ${typeof value}`;
  }
}
