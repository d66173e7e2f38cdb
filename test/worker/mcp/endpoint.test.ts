// /mcp as a transport: who may call (agent key, else 401 pointing at the protected-resource
// metadata), from where (no foreign browser Origin), how much (the body cap), and what a
// malformed message gets (a JSON-RPC error, never a 500); then initialize, the exact list of
// 26 tools, the guide prompt and resource, and /skills/service/MCP.md.
import { describe, expect, it } from "vitest";
import { API, call, claimedAgent, expectError, register, signIn } from "../helpers";
import { mcpPost, rpc, rpcMessage } from "./rpc";

const TOOL_NAMES = [
  "deploy_app", "list_rows", "count_rows", "get_row", "upsert_row", "update_row", "delete_row", "list_deleted_rows", "restore_row",
  "get_feed_events", "apps", "members", "grants", "transfer", "credentials", "connections", "ingest", "attachments", "taste", "key",
  "feedback", "agent", "community", "publisher", "review", "get_skill",
];

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "0" } } };

describe("/mcp transport", () => {
  it("answers 401 with WWW-Authenticate naming the metadata, which is served", async () => {
    for (const opts of [{}, { key: "svc_nope" }, { authorization: "Basic abc" }]) {
      const res = await mcpPost(INIT, opts);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${API}/.well-known/oauth-protected-resource"`);
      await expectError(res, 401, "key" in opts ? "invalid_api_key" : "unauthorized");
    }
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ resource: `${API}/mcp`, bearer_methods_supported: ["header"] });
    }
  });

  it("refuses a foreign browser Origin and an oversize body, and answers bad JSON-RPC with a JSON-RPC error", async () => {
    const agent = await register();
    await expectError(await mcpPost(INIT, { key: agent.api_key, origin: "http://evil.example" }), 403, "csrf_origin_mismatch");
    expect((await mcpPost(INIT, { key: agent.api_key, origin: API })).status).toBe(200);
    await expectError(await mcpPost(JSON.stringify({ pad: "x".repeat(33_554_432) }), { key: agent.api_key }), 413, "payload_too_large");
    for (const bad of ["{not json", "[]", JSON.stringify({ jsonrpc: "2.0", id: 5, method: 42 }), JSON.stringify({ hello: "world" })]) {
      const res = await mcpPost(bad, { key: agent.api_key });
      expect(res.status, bad).toBeGreaterThanOrEqual(400);
      expect(res.status, bad).toBeLessThan(500);
      const message = await rpcMessage(res);
      expect(message.jsonrpc).toBe("2.0");
      expect((message.error as { code: number }).code).toBeLessThan(0);
    }
    const unknown = await rpcMessage(await mcpPost({ jsonrpc: "2.0", id: 9, method: "no/such" }, { key: agent.api_key }));
    expect((unknown.error as { code: number }).code).toBe(-32601);
    // Transport misuse is a 4xx too: no server stream (stateless), no session to delete, a
    // body that is not JSON, an Accept that excludes JSON, an unknown protocol version.
    const misuse = [
      await call("/mcp", { key: agent.api_key, headers: { accept: "text/event-stream" } }),
      await call("/mcp", { method: "DELETE", key: agent.api_key }),
      await mcpPost("{}", { key: agent.api_key, contentType: "text/plain" }),
      await call("/mcp", { method: "POST", key: agent.api_key, json: INIT, headers: { accept: "text/html" } }),
      await mcpPost({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { key: agent.api_key, headers: { "mcp-protocol-version": "1999-01-01" } }),
    ];
    for (const res of misuse) {
      await res.arrayBuffer();
      expect(res.status, `${res.status}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${res.status}`).toBeLessThan(500);
    }
  });

  it("initializes as service and lists exactly the 26 tools, the guide prompt and resource", async () => {
    const agent = await claimedAgent(await signIn());
    const init = await rpc(agent.api_key, "initialize", INIT.params);
    expect(init.serverInfo).toMatchObject({ name: "service" });
    expect(init.capabilities).toMatchObject({ tools: {}, prompts: {}, resources: {} });
    const { tools } = await rpc(agent.api_key, "tools/list") as { tools: { name: string; title: string; inputSchema: { type: string }; annotations: { title: string } }[] };
    expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.annotations.title).toBe(t.title);
    }
    expect(tools.find((t) => t.name === "list_rows")!.annotations).toEqual({ title: "List Rows", readOnlyHint: true, openWorldHint: false });
    const { prompts } = await rpc(agent.api_key, "prompts/list") as { prompts: { name: string; arguments?: unknown[] }[] };
    expect(prompts.map((p) => p.name)).toEqual(["service_guide"]);
    const prompt = await rpc(agent.api_key, "prompts/get", { name: "service_guide" }) as { messages: { role: string; content: { text: string } }[] };
    expect(prompt.messages[0].role).toBe("user");
    expect(prompt.messages[0].content.text).toContain("# Using the relay through MCP");
    const read = await rpc(agent.api_key, "resources/read", { uri: "service://guide" }) as { contents: { mimeType: string; text: string }[] };
    expect(read.contents[0].mimeType).toBe("text/markdown");
    expect(read.contents[0].text).toBe(prompt.messages[0].content.text);
  });

  it("serves the MCP guide and its version without a key", async () => {
    const md = await call("/skills/service/MCP.md");
    expect(md.status).toBe(200);
    expect(md.headers.get("content-type")).toContain("text/markdown");
    expect(await md.text()).toContain("get_feed_events");
    const version = await call("/skills/service/MCP.md/version");
    expect(await version.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
  });
});
