/**
 * The caller's own things (WIRE-MCP §2.19–2.22): `taste` notes, the API `key`,
 * `feedback` about the relay, and the `agent` identity. Hosted (§1.6) there is no local
 * profile: `whoami` reports the agent the bearer key resolved to, and `logout` clears
 * nothing (the key lives in the MCP client's settings, not here).
 */
import * as z from "zod";
import { byAction, defineTool, hints, need, present, relay, type ToolDef } from "../define";
import { seg } from "../relay-call";
import { invalidArgs } from "../results";

const tasteInput = z.strictObject({ action: z.enum(["get", "set", "clear"]), taste: z.string().optional() });
const keyInput = z.strictObject({ action: z.enum(["list", "revoke", "mint"]), confirm: z.boolean().optional() });
const feedbackInput = z.strictObject({
  action: z.enum(["create", "list"]), type: z.enum(["bug", "feature", "note"]).optional(), message: z.string().optional(),
  app_id: z.string().optional(), limit: z.number().int().min(1).max(100).optional(), before: z.string().optional(),
});
const agentInput = z.strictObject({ action: z.enum(["whoami", "claim", "logout"]), code: z.string().optional() });

export const accountTools: ToolDef[] = [
  defineTool({
    name: "taste", annotations: hints("Manage UI Taste Notes", "F", "T", "F", "F"),
    description: "Your freeform markdown notes on your human's UI preferences: get, set (taste; replaces the whole note), clear.",
    input: tasteInput,
    run: byAction<z.infer<typeof tasteInput>>("taste", {
      get: (_args, host) => relay(host, { method: "GET", path: "/v1/taste" }),
      set: (args, host) => {
        if ((args.taste ?? "").trim() === "") throw invalidArgs("set needs a non-blank taste");
        return relay(host, { method: "PUT", path: "/v1/taste", body: { taste: args.taste } });
      },
      clear: async (_args, host) => {
        await relay(host, { method: "DELETE", path: "/v1/taste" });
        return { cleared: true };
      },
    }),
  }),
  defineTool({
    name: "key", annotations: hints("Manage API Key", "F", "T", "F", "F"),
    description: "Your own API key: list (its record, never the key), mint (a sibling key of the same identity, shown once), revoke (confirm: true; irreversible — this connection stops working).",
    input: keyInput,
    run: byAction<z.infer<typeof keyInput>>("key", {
      list: (_args, host) => relay(host, { method: "GET", path: "/v1/keys" }),
      mint: (_args, host) => relay(host, { method: "POST", path: "/v1/keys" }),
      revoke: async (args, host) => {
        if (args.confirm !== true) throw invalidArgs("revoke needs confirm: true (it cannot be undone)");
        const own = await relay(host, { method: "GET", path: "/v1/keys" }) as { agent_id: string };
        await relay(host, { method: "DELETE", path: `/v1/keys/${seg(own.agent_id)}` });
        return { revoked: true, agent_id: own.agent_id };
      },
    }),
  }),
  defineTool({
    name: "feedback", annotations: hints("Manage Feedback", "F", "F", "F", "F"),
    description: "Report a fault of the relay itself (not your task, your app's bugs or your own 4xx): create (type bug|feature|note, message with surface mcp, tool, expected, observed code and message, repro; app_id), list (limit, before) to avoid filing twice. There is no reply channel.",
    input: feedbackInput,
    run: byAction<z.infer<typeof feedbackInput>>("feedback", {
      create: (args, host) => {
        need(args, "create", "type", "message");
        return relay(host, { method: "POST", path: "/v1/feedback", body: present({ type: args.type, message: args.message, app_id: args.app_id }) });
      },
      list: (args, host) => relay(host, { method: "GET", path: "/v1/feedback", query: { limit: args.limit, before: args.before } }),
    }),
  }),
  defineTool({
    name: "agent", annotations: hints("Manage Agent Identity", "F", "F", "F", "F"),
    description: "Your identity on this relay: whoami (the agent your key belongs to; never the key), claim (code: a claim code from your human binds you to them; one-way), logout (nothing to clear here: remove the key from your MCP client's settings).",
    input: agentInput,
    run: byAction<z.infer<typeof agentInput>>("agent", {
      whoami: async (_args, host) => ({
        url: host.relay.apiOrigin, profile: null, api_key_present: true, api_key_source: "header", store_path: null,
        agent_id: host.caller.agentId, name: host.caller.name, key_prefix: host.caller.keyPrefix,
        claimed: host.caller.ownerHumanId !== null,
      }),
      claim: (args, host) => {
        need(args, "claim", "code");
        return relay(host, { method: "POST", path: "/v1/agents/claim", body: { code: args.code } });
      },
      logout: async () => ({ cleared: false, profile: null, path: null, note: "The hosted endpoint keeps no profile; remove the key from your MCP client's settings (key revoke ends it for good)." }),
    }),
  }),
];
