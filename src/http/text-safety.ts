/**
 * Text the relay keeps must be Unicode it can store and hand back unchanged. A JSON body's
 * escapes can spell strings no UTF-8 encoder can write (an unpaired surrogate, "\ud800")
 * and NUL characters ("\u0000") that C-string code stops at; an outside probe found both
 * stored in names and keys. Both are refused in every JSON body the relay parses, in keys
 * and values alike, and in request paths and query strings (url-text middleware), with the
 * path of the first offending string (`data.title`; `body` for the body itself).
 */
import { RelayError } from "../errors";

/** Only these escapes can produce either kind of text from JSON that is valid UTF-8. */
const RISKY_ESCAPE = /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `text`, or null when it can be kept. */
export function unsafeTextProblem(text: string): string | null {
  if (text.includes("\u0000")) return "a NUL character";
  if (LONE_SURROGATE.test(text)) return "an unpaired UTF-16 surrogate, which is not text UTF-8 can hold";
  return null;
}

/** The refusal for text found at `where` (a JSON path such as `body.data.title`, or `path`/`query`). */
export function unsafeTextError(where: string, problem: string): RelayError {
  return new RelayError("invalid_request", `${where} holds ${problem}; send plain Unicode text.`, { field: where });
}

/**
 * Refuses a parsed JSON body that holds such text anywhere. `source` is the text it was
 * parsed from: without one of the escapes that make such text, nothing is walked. The walk
 * is iterative, so however deep the nesting it cannot overflow the stack.
 */
export function refuseUnsafeJsonText(source: string, value: unknown): void {
  if (!RISKY_ESCAPE.test(source)) return;
  // Paths as the relay's other field errors name them: `name`, `data.title`, `assets.1.path`.
  const child = (path: string, step: string | number) => (path === "" ? String(step) : `${path}.${step}`);
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: "" }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === "string") {
      const problem = unsafeTextProblem(current);
      if (problem) throw unsafeTextError(path || "body", problem);
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: child(path, index) }));
    } else if (current !== null && typeof current === "object") {
      for (const [key, item] of Object.entries(current)) {
        const problem = unsafeTextProblem(key);
        if (problem) throw unsafeTextError(path || "body", `a key with ${problem}`);
        pending.push({ value: item, path: child(path, key) });
      }
    }
  }
}
