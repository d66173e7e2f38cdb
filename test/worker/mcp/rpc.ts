// JSON-RPC over fetch against /mcp for the worker tests: one POST per message with the
// headers Streamable HTTP asks for, the answer read from JSON or from the event stream.
import { expect } from "vitest";
import { call, type CallOptions } from "../helpers";

type Obj = Record<string, unknown>;

let nextId = 0;

export function mcpPost(body: unknown, opts: CallOptions = {}): Promise<Response> {
  return call("/mcp", {
    method: "POST", ...opts,
    headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...(opts.headers ?? {}) },
    ...(typeof body === "string" ? { body, contentType: "application/json" } : { json: body }),
  });
}

/** The JSON-RPC message an answer carries (an SSE stream's first data line, or the JSON body). */
export async function rpcMessage(res: Response): Promise<Obj> {
  const text = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const line = text.split("\n").find((l) => l.startsWith("data:"));
    expect(line, text).toBeDefined();
    return JSON.parse(line!.slice(5)) as Obj;
  }
  return JSON.parse(text) as Obj;
}

/** One request; its `result`, failing the test on a JSON-RPC error. */
export async function rpc(key: string, method: string, params: Obj = {}): Promise<Obj> {
  nextId += 1;
  const res = await mcpPost({ jsonrpc: "2.0", id: nextId, method, params }, { key });
  expect(res.status).toBe(200);
  const message = await rpcMessage(res);
  expect(message.error, JSON.stringify(message.error)).toBeUndefined();
  return message.result as Obj;
}

/** A tool call's result: `{ ok, value }` with the text parsed as JSON when it is JSON. */
export async function tool(key: string, name: string, args: Obj): Promise<{ isError: boolean; value: any; text: string }> {
  const result = await rpc(key, "tools/call", { name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  const text = content[0].text;
  let value: unknown = text;
  try { value = JSON.parse(text); } catch { /* markdown */ }
  return { isError: result.isError === true, value, text };
}
