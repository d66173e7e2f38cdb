// Every place the Worker's own code reaches the runtime's fetch (DESIGN §6, issue 16's SSRF
// table): a URL someone else chose may only be fetched through the outbound guard
// (src/effects/outbound-fetch.ts), so each direct use of the global `fetch` in src/ is
// listed here with the reason it is safe. A new one fails this test until it goes through
// the guard or is added with its reason (and docs/security.md's list is updated).
// The page script and the CLI are left out: they run in a browser and on a person's
// machine, not in the relay.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { root, sourceFiles } from "./source-files";
import { describe, expect, it } from "vitest";

const OUTSIDE_THE_RELAY = ["src/page-script/", "src/cli/"];

/** Each file that uses the global fetch, and why the URL it fetches is not someone else's choice (or is guarded). */
const ALLOWED: Record<string, string> = {
  "src/effects/outbound-fetch.ts": "the guard itself: sends only after refusedTarget and the DNS check; its resolver asks a fixed DNS-over-HTTPS endpoint",
  "src/effects/notify/push.ts": "the fetcher handed to outboundFetch, so it runs only after the guard passed the endpoint",
  "src/auth/identity-provider.ts": "the operator's IDP_ISSUER and the endpoints its discovery document names",
  "src/auth/turnstile.ts": "Cloudflare's fixed siteverify URL",
  "src/mail/mailer.ts": "the operator's MAIL_HTTP_URL",
};

function sources(folder: string): string[] {
  return sourceFiles(folder, { file: (name) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith(".d.ts") });
}

/** The code without comments and string literals, so words in them do not count. */
function codeOnly(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:\\])\/\/.*$/gm, "$1")
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
}

/** A call of the global fetch, or the global fetch taken as a value (a default, a fallback). */
const GLOBAL_FETCH = /(?<![.\w$])(?<!async\s)fetch\s*\(|(?:=|\?\?|\|\|)\s*fetch\b(?![\w$])/;

describe("the Worker's outbound fetches", () => {
  it("use the global fetch only where listed: every URL someone else chose goes through the outbound guard", () => {
    const users = sources("src")
      .map((path) => relative(root, path).replaceAll("\\", "/"))
      .filter((path) => !OUTSIDE_THE_RELAY.some((prefix) => path.startsWith(prefix)))
      .filter((path) => GLOBAL_FETCH.test(codeOnly(readFileSync(join(root, path), "utf8"))));
    expect(users.sort()).toEqual(Object.keys(ALLOWED).sort());
  });
});
