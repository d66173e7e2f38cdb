/**
 * The `attachments` tool (WIRE-MCP §2.18): upload inline, fetch from a URL, presign and
 * finalize, download, show, list, delete and capability tokens, each one `/v1/attachments`
 * route. Hosted, no file on the relay's host is read or written (§1.6): `file_path` and
 * `out_path` are refused, and a download comes back as base64.
 */
import * as z from "zod";
import { byAction, defineTool, hints, need, present, relay, type ToolDef } from "../define";
import { seg } from "../relay-call";
import { invalidArgs } from "../results";

const attachmentId = z.string().meta({ format: "service-attachment-id" });

const input = z.strictObject({
  action: z.enum(["upload", "fetch", "presign", "finalize", "download", "show", "list", "delete", "mint_token", "revoke_token", "list_tokens"]),
  content_base64: z.string().optional(), file_path: z.string().optional(), source_url: z.string().optional(),
  scope: z.enum(["agent", "app"]).optional(), app_id: z.string().optional(), filename: z.string().optional(), mime: z.string().optional(),
  size: z.number().int().min(1).optional(), sha256: z.string().regex(/^[0-9a-f]{64}$/i).optional(),
  attachment_id: attachmentId.optional(), out_path: z.string().optional(), cursor: z.string().optional(), limit: z.number().int().min(1).max(100).optional(),
  ttl_seconds: z.number().int().min(1).optional(), once: z.boolean().optional(), token_id: z.string().optional(),
});
type Args = z.infer<typeof input>;

/** Where the file goes: the tool defaults scope to agent and always sends it. */
const placement = (args: Args) => present({ scope: args.scope ?? "agent", app_id: args.app_id });

const one = (args: Args, suffix = "") => {
  need(args, args.action, "attachment_id");
  return `/v1/attachments/${seg(args.attachment_id!)}${suffix}`;
};

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.length; offset += 0x8000) binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

export const attachmentsTool: ToolDef = defineTool({
  name: "attachments", annotations: hints("Manage Attachments", "F", "T", "F", "T"),
  description: "Binary attachments: upload (content_base64; scope agent|app, app_id for app scope, filename, mime), fetch (source_url, https), presign (mime, size, sha256; you PUT the bytes to put_url yourself) then finalize, download (base64 back), show, list, delete, mint_token / list_tokens / revoke_token (capability URLs). Prefer fetch or presign over large inline uploads. This endpoint reads and writes no files: send bytes inline.",
  input,
  run: byAction<Args>("attachments", {
    upload: (args, host) => {
      if (args.content_base64 === undefined && args.file_path !== undefined) throw invalidArgs("file_path is not available on the hosted relay; send the bytes as content_base64");
      need(args, "upload", "content_base64");
      return relay(host, { method: "POST", path: "/v1/attachments", body: present({ content_base64: args.content_base64, ...placement(args), filename: args.filename, mime: args.mime }) });
    },
    fetch: (args, host) => {
      need(args, "fetch", "source_url");
      return relay(host, { method: "POST", path: "/v1/attachments/fetch", body: present({ source_url: args.source_url, ...placement(args), mime: args.mime }) });
    },
    presign: async (args, host) => {
      need(args, "presign", "mime", "size", "sha256");
      const signed = await relay(host, { method: "POST", path: "/v1/attachments/presign", body: present({ mime: args.mime, size: args.size, sha256: args.sha256, ...placement(args), filename: args.filename }) }) as Record<string, unknown>;
      return { put_url: signed.upload_url, attachment_id: signed.attachment_id, expires_at: signed.expires_at };
    },
    finalize: (args, host) => relay(host, { method: "POST", path: one(args, "/confirm") }),
    download: async (args, host) => {
      if (args.out_path !== undefined) throw invalidArgs("out_path is not available on the hosted relay; the bytes come back as base64");
      const bytes = await relay(host, { method: "GET", path: one(args), expect: "bytes" }) as Uint8Array;
      return { attachment_id: args.attachment_id, bytes: bytes.byteLength, base64: toBase64(bytes) };
    },
    show: (args, host) => relay(host, { method: "GET", path: one(args, "/metadata") }),
    list: (args, host) => relay(host, { method: "GET", path: "/v1/attachments", query: { cursor: args.cursor, limit: args.limit } }),
    delete: async (args, host) => {
      await relay(host, { method: "DELETE", path: one(args) });
      return { deleted: true };
    },
    mint_token: (args, host) => relay(host, { method: "POST", path: one(args, "/tokens"), body: present({ ttl_seconds: args.ttl_seconds, once: args.once === true }) }),
    revoke_token: async (args, host) => {
      need(args, "revoke_token", "token_id");
      await relay(host, { method: "DELETE", path: one(args, `/tokens/${seg(args.token_id!)}`) });
      return { token_id: args.token_id, revoked: true };
    },
    list_tokens: (args, host) => relay(host, { method: "GET", path: one(args, "/tokens") }),
  }),
});
