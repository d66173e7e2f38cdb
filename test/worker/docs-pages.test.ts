// The documentation an agent can read knowing only the relay's URL: the manifest and
// page-script guides at /docs/<guide> (HTML by default, markdown for Accept: text/markdown,
// plain text for Accept: text/plain, always markdown at /docs/<guide>.md), the /docs index,
// and the error catalogue's hints and the skill document, every path of which must answer 200
// on the API origin (with the section its #anchor names).
import { describe, expect, it } from "vitest";
import manifestGuide from "../../docs/manifest.md";
import pageScriptGuide from "../../docs/page-script.md";
import ingestGuide from "../../docs/ingest.md";
import mcpGuide from "../../docs/mcp.md";
import { catalogue } from "../../src/errors";
import { SKILL_MD } from "../../src/skill/skill-doc";
import { call, expectError } from "./helpers";
import { BROWSER, expectReadable, originPaths } from "./docs/readable";

const GUIDES: Array<[string, string, string]> = [
  ["/docs/manifest", manifestGuide, "The app manifest"],
  ["/docs/page-script", pageScriptGuide, "The page script (window.service)"],
  ["/docs/ingest", ingestGuide, "Inbound hooks"],
  ["/docs/mcp", mcpGuide, "The MCP endpoint"],
];

describe("the guides on the API origin", () => {
  for (const [path, markdown, title] of GUIDES) {
    it(`${path}: HTML for a browser and for a client that says nothing`, async () => {
      for (const headers of [{ accept: BROWSER }, {}, { accept: "*/*" }] as Array<Record<string, string>>) {
        const res = await call(path, { headers });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/i);
        expect(res.headers.get("vary")).toMatch(/accept/i);
        const html = await res.text();
        expect(html).toContain(`<title>${title} — the relay</title>`);
        expect(html).toMatch(/<h1 id="[a-z-]+">/);
        expect(html).toContain('<a href="/docs/errors">');
        expect(html).not.toContain("<script");
      }
    });

    it(`${path}: the markdown itself for Accept: text/markdown, the same text for text/plain, and at ${path}.md`, async () => {
      const asked = await call(path, { headers: { accept: "text/markdown" } });
      expect(asked.status).toBe(200);
      expect(asked.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(await asked.text()).toBe(markdown);
      const plain = await call(path, { headers: { accept: "text/plain" } });
      expect(plain.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await plain.text()).toBe(markdown);
      const preferred = await call(path, { headers: { accept: "text/markdown, text/html;q=0.5" } });
      expect(preferred.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      const file = await call(`${path}.md`, { headers: { accept: BROWSER } });
      expect(file.status).toBe(200);
      expect(file.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(await file.text()).toBe(markdown);
    });

    it(`${path}: HEAD answers, other verbs are 405`, async () => {
      const head = await call(path, { method: "HEAD" });
      expect(head.status).toBe(200);
      const res = await call(path, { method: "POST", json: {} });
      await expectError(res, 405, "method_not_allowed");
      expect(res.headers.get("allow")).toContain("GET");
    });
  }

  it("the manifest guide's HTML carries its sections as anchors, its code and tables escaped", async () => {
    const html = await (await call("/docs/manifest")).text();
    for (const id of ["the-app-manifest", "collections", "row-schema", "permission-lists", "notify", "limits", "errors", "redeploying-the-compatibility-gate"]) {
      expect(html, id).toContain(`id="${id}"`);
    }
    expect(html).toContain("<table>");
    expect(html).toContain('<pre><code class="language-json">');
    expect(html).toContain("<code>&lt;holder&gt;:own</code>");
  });

  it("/docs lists every page, in HTML and in markdown, and each link answers", async () => {
    const md = await (await call("/docs", { headers: { accept: "text/markdown" } })).text();
    for (const path of ["/docs/errors", "/docs/manifest", "/docs/page-script", "/skills/service/SKILL.md", "/v1/openapi.json"]) {
      expect(md).toContain(`](${path})`);
      await expectReadable(path, "/docs");
    }
    const html = await (await call("/docs")).text();
    expect(html).toContain('<a href="/docs/manifest">The app manifest</a>');
  });

  it("/docs/errors answers its table as markdown too, every code in it", async () => {
    const res = await call("/docs/errors", { headers: { accept: "text/markdown" } });
    expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    const md = await res.text();
    for (const code of Object.keys(catalogue)) expect(md).toContain(`| \`${code}\` |`);
  });
});

describe("every path a hint or the skill document names answers 200", () => {
  it("the catalogue's hints: each path on the API origin, with its anchor", async () => {
    const named = Object.entries(catalogue).flatMap(([code, entry]) => originPaths(entry.hint).map((path) => [code, path] as const));
    // The walk must not pass by finding nothing: the manifest codes point into the guide.
    expect(named.filter(([code]) => code === "manifest_invalid").map(([, path]) => path)).toEqual(["/docs/manifest"]);
    expect(named.length).toBeGreaterThanOrEqual(20);
    for (const [code, path] of named) await expectReadable(path, `hint of ${code}`);
  });

  it("/docs/errors links each hint's paths", async () => {
    const html = await (await call("/docs/errors")).text();
    const row = /<tr id="manifest_invalid">.*?<\/tr>/.exec(html)![0];
    expect(row).toContain('<a href="/docs/manifest">/docs/manifest</a>');
    const links = [...html.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]);
    for (const path of new Set(links)) await expectReadable(path, "/docs/errors");
  });

  it("the skill document points at the guides on the relay, not at a repository", async () => {
    expect(SKILL_MD).toContain("`/docs/manifest`");
    expect(SKILL_MD).toContain("`/docs/page-script`");
    expect(SKILL_MD).not.toMatch(/repository/);
    const paths = originPaths(SKILL_MD).filter((p) => /^\/(docs|skills|v1\/openapi)/.test(p));
    expect(paths.length).toBeGreaterThanOrEqual(5);
    for (const path of new Set(paths)) await expectReadable(path, "the skill document");
  });
});
