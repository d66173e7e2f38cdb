// Issue 15's "done when", as a new user would do it: an MCP client (the official SDK's
// Client over Streamable HTTP) is given the relay's /mcp URL and an agent key, deploys a
// shared todo list and adds three todos; the owner opens the app in Chromium and sees
// them; `service apps export` writes the app to an archive and `service apps import`
// makes a second app from it, whose page shows the same three todos.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { fakeIp, ownerWithAgent, relayUrl, signInHere, useBrowser } from "./support";
import { runCli } from "../cli/helpers";

const { newPage } = useBrowser();

type Obj = Record<string, any>;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Todo: { type: "object", properties: { title: { type: "string", maxLength: 100 }, done: { type: "boolean" } }, required: ["title"], additionalProperties: false } },
  "x-service-manifest": {
    app: { name: "Shared todos" },
    collections: { todos: { schema: { $ref: "#/$defs/Todo" }, read: ["owner", "member"], write: ["owner", "member"], update: ["owner", "member"], delete: ["owner"] } },
  },
};
/** The todo list: every todo of the mirror, kept current as rows arrive. */
const HTML = `<!doctype html><html><head><title>Shared todos</title></head><body><h1>Todos</h1><ul id="todos"></ul>
<script>
  const render = () => {
    const list = document.getElementById("todos");
    list.replaceChildren(...service.collections.snapshot("todos").map((row) => {
      const item = document.createElement("li");
      item.textContent = row.data.title;
      return item;
    }));
  };
  service.collections.on("todos", render);
  service.ready.then(render);
</script></body></html>`;
const TITLES = ["Buy milk", "Bake bread", "Call mum"];

const work = mkdtempSync(path.join(tmpdir(), "mcp-done-when-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function ok(client: Client, name: string, args: Obj): Promise<Obj> {
  const result = await client.callTool({ name, arguments: args }) as { content: { type: string; text: string }[]; isError?: boolean };
  const value = JSON.parse(result.content[0].text) as Obj;
  expect(result.isError ?? false, `${name}: ${JSON.stringify(value)}`).toBe(false);
  return value;
}

/** Opens an app as its owner (signing in through the relay) and answers the titles the page lists once it lists `count`. */
async function todosShown(p: Page, url: string, email: string, count: number): Promise<string[]> {
  await p.goto(url);
  await p.locator("#svc-sign-in").click();
  // Signed in at the relay already (the first app), the hand-off comes straight back.
  await p.waitForURL((at) => at.pathname === "/signin" || at.origin === new URL(url).origin);
  if (new URL(p.url()).pathname === "/signin") await signInHere(p, email);
  await p.waitForFunction((n) => document.querySelectorAll("#todos li").length === n, count, { timeout: 20_000 });
  return (await p.locator("#todos li").allTextContents()).sort();
}

describe("issue 15, done when", () => {
  it("an MCP client deploys a todo list with three todos, the browser shows them, and export → import makes a second app with the same todos", { timeout: 180_000 }, async () => {
    const { email, key } = await ownerWithAgent("mcp-done");

    // 1. The MCP client, configured with the /mcp URL and the agent key.
    const client = new Client({ name: "new-user", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${relayUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, "cf-connecting-ip": fakeIp() } },
    }));
    const app = await ok(client, "deploy_app", { html: HTML, manifest: MANIFEST, visibility: "private" });
    for (const title of TITLES) await ok(client, "upsert_row", { app_id: app.app_id, collection: "todos", data: { title } });
    expect((await ok(client, "list_rows", { app_id: app.app_id, collection: "todos" })).rows).toHaveLength(3);
    await client.close();

    // 2. The owner opens the app and sees the three todos.
    const p = await newPage();
    expect(await todosShown(p, app.url, email, 3)).toEqual([...TITLES].sort());

    // 3. Export with the CLI, import as a second app, and the same todos are there.
    const home = mkdtempSync(path.join(work, "home-"));
    const env = { SERVICE_URL: relayUrl, SERVICE_API_KEY: key };
    const archive = path.join(work, "todos.tar");
    const exported = await runCli(home, ["apps", "export", app.app_id, "--out", archive], { env });
    expect(exported.code, exported.stderr).toBe(0);
    expect(statSync(archive).size).toBeGreaterThan(0);
    const imported = await runCli(home, ["apps", "import", archive], { env });
    expect(imported.code, imported.stderr).toBe(0);
    const second = JSON.parse(imported.stdout) as Obj;
    const secondId = second.app_id ?? second.app?.app_id;
    const secondUrl = second.url ?? second.app?.url;
    expect(secondId).toBeTruthy();
    expect(secondId).not.toBe(app.app_id);

    const rowsOf = async (appId: string) => {
      const res = await fetch(`${relayUrl}/v1/apps/${appId}/collections/todos`, { headers: { authorization: `Bearer ${key}`, "cf-connecting-ip": fakeIp() } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { rows: Obj[] }).rows.map((row) => ({ key: row.key, data: row.data, version: row.version })).sort((a, b) => a.key.localeCompare(b.key));
    };
    expect(await rowsOf(secondId)).toEqual(await rowsOf(app.app_id));
    expect(await todosShown(p, secondUrl, email, 3)).toEqual([...TITLES].sort());
  });
});
