// No log line in the relay prints a caught error whole (issue 16: no secret in a log line).
// A failed D1 statement's error carries the values bound to it, and some statements bind
// secrets, so a console call that is handed a caught error (or its message, or `${err}`)
// can print them; each such call goes through errorLogLine (src/db/query-errors.ts), or
// withoutBoundValues where the stack is wanted. This test reads every console call in src/,
// durable-objects/ and workers/ and fails on one that passes a caught error straight through. The page script and the
// CLI are left out: they run in a browser and on a person's machine, not in the relay.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { root, sourceFiles } from "./source-files";
import { describe, expect, it } from "vitest";

const OUTSIDE_THE_RELAY = ["src/page-script/", "src/cli/"];

/** Calls that make a thrown value safe to log: what is inside them does not count. */
const SAFE_WRAPPERS = new Set(["errorLogLine", "withoutBoundValues"]);

/** Names that hold a thrown value wherever they appear in a console call. */
const ALWAYS_CAUGHT = ["err", "error"];

/** `catch (x)`, `.catch((x) =>`, `.catch(x =>`, `.catch(async (x: unknown) =>`: the names a file binds to a caught value. */
const CATCH_BINDINGS = [/\bcatch\s*\(\s*([A-Za-z_$][\w$]*)/g, /\.catch\(\s*(?:async\s+)?\(?\s*([A-Za-z_$][\w$]*)\s*(?::\s*[\w$]+)?\s*\)?\s*=>/g];

/** `x.status === "rejected"`: `x.reason` is a thrown value (a settled promise's). */
const REJECTED_RESULT = /([A-Za-z_$][\w$]*)\.status\s*===\s*["']rejected["']/g;

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:\\"'`])\/\/.*$/gm, "$1");
}

/**
 * The code of a call's arguments from the `(` at `open`: string literals emptied, a template
 * literal kept only as its `${…}` expressions, the insides of safe wrappers left out.
 * Returns that code and the index after the closing `)`.
 */
function argumentCode(text: string, open: number): { code: string; end: number } {
  let code = "";
  let depth = 0;
  let i = open;
  const skipQuoted = (quote: string) => {
    i += 1;
    while (i < text.length && text[i] !== quote) i += text[i] === "\\" ? 2 : 1;
    i += 1;
  };
  const template = () => {
    i += 1;
    while (i < text.length && text[i] !== "`") {
      if (text[i] === "\\") i += 2;
      else if (text.startsWith("${", i)) {
        const inner = argumentCode(text, i + 1);
        code += ` ${inner.code.slice(1, -1)} `;
        i = inner.end;
      } else i += 1;
    }
    i += 1;
  };
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"' || ch === "'") { skipQuoted(ch); code += '""'; continue; }
    if (ch === "`") { template(); continue; }
    const word = /^[A-Za-z_$][\w$]*/.exec(text.slice(i, i + 64))?.[0];
    if (word) {
      const after = i + word.length;
      if (SAFE_WRAPPERS.has(word) && text[after] === "(") {
        i = argumentCode(text, after).end;
        code += "safe";
        continue;
      }
      code += word;
      i = after;
      continue;
    }
    if (ch === "(" || ch === "{" || ch === "[") depth += 1;
    if (ch === ")" || ch === "}" || ch === "]") depth -= 1;
    code += ch;
    i += 1;
    if (depth === 0) break;
  }
  return { code, end: i };
}

/** Each console call in `source` that logs a caught error whole, as the call's first line. */
function unsafeLogCalls(source: string): string[] {
  const text = withoutComments(source);
  const caught = new Set(ALWAYS_CAUGHT);
  for (const pattern of CATCH_BINDINGS) for (const match of text.matchAll(pattern)) caught.add(match[1]);
  const rejected = [...text.matchAll(REJECTED_RESULT)].map((match) => match[1]);
  const found: string[] = [];
  for (const call of text.matchAll(/\bconsole\.(?:error|warn|log|info)\s*\(/g)) {
    const { code } = argumentCode(text, call.index + call[0].length - 1);
    const passesCaught = [...caught].some((name) => new RegExp(`(?<![\\w$.])${name.replace(/\$/g, "\\$")}(?![\\w$])`).test(code));
    const passesReason = rejected.some((name) => new RegExp(`(?<![\\w$.])${name}\\.reason\\b`).test(code));
    if (passesCaught || passesReason) found.push(text.slice(call.index).split("\n")[0].trim());
  }
  return found;
}

describe("log lines of caught errors", () => {
  it("the check finds a caught error passed whole, by message or in a template, and lets a safe line through", () => {
    const unsafe = [
      "try { x(); } catch (failure) { console.error(\"x failed\", failure); }",
      "p.catch((e) => console.warn(`p failed`, e));",
      "p.catch(async (cleanup: unknown) => console.error(\"no\", cleanup));",
      "try { x(); } catch (e) { console.warn(\"x\", e.message); }",
      "try { x(); } catch (e) { console.warn(`x failed: ${e}`); }",
      "const handler = (err) => console.error(\"late\", err);",
      "for (const a of r) if (a.status === \"rejected\") console.error(\"no\", a.reason);",
      "try { x(); } catch (e) { console.error(\"x\", errorLogLine(id), e); }",
    ];
    const safe = [
      "try { x(); } catch (e) { console.error(\"x failed\", errorLogLine(e)); }",
      "p.catch((e) => console.warn(`p failed (${errorLogLine(e)})`));",
      "try { x(); } catch (e) { console.error(\"x\", withoutBoundValues(e)); }",
      "try { x(); } catch (e) { console.error(\"x\", id); } console.warn(\"err\", outcome.reason, `e ${count}`);",
      "// console.error(\"commented\", err)\nconsole.error(\"fine\");",
    ];
    for (const source of unsafe) expect(unsafeLogCalls(source), source).toHaveLength(1);
    for (const source of safe) expect(unsafeLogCalls(source), source).toEqual([]);
  });

  it("no console call in the relay's source logs a caught error whole: each goes through errorLogLine", () => {
    const files = ["src", "durable-objects", "workers"]
      .flatMap((folder) => sourceFiles(folder, { file: (name) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith(".d.ts") }))
      .map((path) => relative(root, path).replaceAll("\\", "/"))
      .filter((path) => !OUTSIDE_THE_RELAY.some((prefix) => path.startsWith(prefix)));
    const unsafe = files.flatMap((path) => unsafeLogCalls(readFileSync(join(root, path), "utf8")).map((call) => `${path}: ${call}`));
    expect(unsafe).toEqual([]);
  });
});
