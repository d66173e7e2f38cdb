/**
 * One MCP server per request (the endpoint is stateless): the 26 tools of WIRE-MCP §2
 * bound to the authenticated caller, and the `service_guide` prompt and resource of §1.5.
 * Every tool call is answered in the §1.4 shape; nothing a tool throws escapes as a
 * JSON-RPC error.
 */
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { mcpGuideMarkdown, MCP_GUIDE_VERSION } from "../skill/mcp-guide";
import { checkedArgs, type ToolDef, type ToolHost } from "./define";
import { failed, success } from "./results";
import { TOOLS } from "./tools";

export const SERVER_NAME = "service";
const GUIDE = { name: "service_guide", uri: "service://guide", title: "Service usage guide" } as const;

/**
 * What the SDK is given as a tool's input schema: it advertises the tool's real JSON
 * Schema in tools/list but accepts any value, so the strict check (and its error shape)
 * is ours (src/mcp/define.ts).
 */
function advertised(schema: z.ZodObject) {
  const json = () => jsonSchemaOf(schema);
  return {
    "~standard": {
      version: 1 as const, vendor: "service",
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: json, output: json },
    },
  };
}

/** Each tool's JSON Schema, converted once per isolate when first asked for (the schemas never change). */
const converted = new WeakMap<z.ZodObject, Record<string, unknown>>();
function jsonSchemaOf(schema: z.ZodObject): Record<string, unknown> {
  let json = converted.get(schema);
  if (!json) {
    json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
    delete json.$schema;
    converted.set(schema, json);
  }
  return json;
}

function register(server: McpServer, tool: ToolDef, host: ToolHost): void {
  server.registerTool(tool.name, {
    title: tool.annotations.title, description: tool.description, inputSchema: advertised(tool.input), annotations: tool.annotations,
  }, async (args: unknown) => {
    try {
      return success(await tool.run(checkedArgs(tool, args), host));
    } catch (err) {
      return failed(err);
    }
  });
}

export function buildServer(host: ToolHost): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: MCP_GUIDE_VERSION });
  for (const tool of TOOLS) register(server, tool, host);
  server.registerPrompt(GUIDE.name, { title: GUIDE.title, description: "How to use the relay through these tools." }, async () => ({
    messages: [{ role: "user" as const, content: { type: "text" as const, text: await mcpGuideMarkdown() } }],
  }));
  server.registerResource(GUIDE.name, GUIDE.uri, { title: GUIDE.title, mimeType: "text/markdown" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/markdown", text: await mcpGuideMarkdown() }],
  }));
  return server;
}
