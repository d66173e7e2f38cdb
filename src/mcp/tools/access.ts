/**
 * Who may use an app (WIRE-MCP §2.12–2.15): `members`, `grants`, `transfer` and
 * `credentials`, each action one `/v1` route under the app, with the tool-built answers
 * the spec gives for deletes. The transfer body is snake_case (`keep_as_member`): this
 * relay's transfer route follows CONTRACT, where the real one took camelCase.
 */
import * as z from "zod";
import { byAction, defineTool, hints, need, present, relay, required, type ToolDef, type ToolHost } from "../define";
import { seg } from "../relay-call";
import { invalidArgs } from "../results";

const under = (appId: string, suffix: string) => `/v1/apps/${seg(appId)}${suffix}`;

const membersInput = z.strictObject({
  action: z.enum(["add", "list", "set_role", "remove", "roles"]), app_id: required,
  email: z.string().optional(), role: z.enum(["member"]).optional(), custom_roles: z.array(z.string()).optional(), human_id: z.string().optional(),
});
type MembersArgs = z.infer<typeof membersInput>;

const grantsInput = z.strictObject({
  action: z.enum(["mint", "list", "revoke"]), app_id: required,
  role: z.string().optional(), mode: z.enum(["once", "multi"]).optional(), max_uses: z.number().int().min(1).optional(),
  label: z.string().optional(), ttl_seconds: z.number().int().min(1).optional(), pin_row_key: z.string().optional(),
  pin_where: z.array(z.strictObject({ field: z.string(), op: z.string(), value: z.unknown() })).optional(), grant_id: z.string().optional(),
});
type GrantsArgs = z.infer<typeof grantsInput>;

const transferInput = z.strictObject({ action: z.enum(["start", "status", "cancel"]), app_id: required, email: z.string().optional(), keep_as_member: z.boolean().optional() });
type TransferArgs = z.infer<typeof transferInput>;

const credentialsInput = z.strictObject({
  action: z.enum(["mint", "list", "pause", "resume", "rotate", "revoke"]), app_id: required,
  mode: z.enum(["explicit", "following"]).optional(),
  grants: z.array(z.strictObject({ collection: required, ops: z.array(z.enum(["read", "create", "update", "delete"])), scope: z.enum(["own"]).optional() })).optional(),
  members: z.boolean().optional(), label: z.string().optional(), ttl_seconds: z.number().int().min(1).nullable().optional(),
  credential_id: z.string().optional(), overlap_seconds: z.number().int().min(0).optional(),
});
type CredentialsArgs = z.infer<typeof credentialsInput>;

/** A credential action on one credential: its path, after checking the id was given. */
function credentialPath(args: CredentialsArgs, suffix = ""): string {
  need(args, args.action, "credential_id");
  return under(args.app_id, `/credentials/${seg(args.credential_id!)}${suffix}`);
}

async function credentialSwitch(args: CredentialsArgs, host: ToolHost, verb: "pause" | "resume"): Promise<unknown> {
  await relay(host, { method: "POST", path: credentialPath(args, `/${verb}`) });
  return { app_id: args.app_id, credential_id: args.credential_id, [verb === "pause" ? "paused" : "resumed"]: true };
}

export const accessTools: ToolDef[] = [
  defineTool({
    name: "members", annotations: hints("Manage App Members", "F", "T", "T", "F"),
    description: "An app's members: add (email; invites when they have no account), list, set_role (human_id, custom_roles; [] clears), remove (human_id; also ends their sessions), roles (the app's declared roles).",
    input: membersInput,
    run: byAction<MembersArgs>("members", {
      add: (args, host) => {
        need(args, "add", "email");
        return relay(host, { method: "POST", path: under(args.app_id, "/members"), body: present({ email: args.email, role: args.role, custom_roles: args.custom_roles }) });
      },
      list: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/members") }),
      set_role: (args, host) => {
        need(args, "set_role", "human_id");
        if (!Array.isArray(args.custom_roles)) throw invalidArgs("set_role needs custom_roles as an array ([] clears)");
        return relay(host, { method: "PATCH", path: under(args.app_id, `/members/${seg(args.human_id!)}`), body: { custom_roles: args.custom_roles } });
      },
      remove: async (args, host) => {
        need(args, "remove", "human_id");
        await relay(host, { method: "DELETE", path: under(args.app_id, `/members/${seg(args.human_id!)}`) });
        return { app_id: args.app_id, human_id: args.human_id, removed: true };
      },
      roles: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/roles") }),
    }),
  }),
  defineTool({
    name: "grants", annotations: hints("Manage App Grant Links", "F", "T", "F", "F"),
    description: "Capability links that confer a declared custom role: mint (role; mode once|multi, max_uses, label, ttl_seconds, pin_row_key or pin_where), list, revoke (grant_id). The token is in the URL's #g= and shown once. A write-only grant pinned to one key can read that row back through create-dedup.",
    input: grantsInput,
    run: byAction<GrantsArgs>("grants", {
      mint: (args, host) => {
        need(args, "mint", "role");
        if (args.pin_row_key !== undefined && args.pin_where !== undefined) throw invalidArgs("mint takes pin_row_key or pin_where, not both");
        const pin = args.pin_row_key !== undefined ? { row_key: args.pin_row_key } : args.pin_where !== undefined ? { where: args.pin_where } : undefined;
        return relay(host, {
          method: "POST", path: under(args.app_id, "/grants"),
          body: present({ role: args.role, mode: args.mode, max_uses: args.mode === "once" ? 1 : args.max_uses, label: args.label, ttl_seconds: args.ttl_seconds, pin }),
        });
      },
      list: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/grants") }),
      revoke: async (args, host) => {
        need(args, "revoke", "grant_id");
        await relay(host, { method: "DELETE", path: under(args.app_id, `/grants/${seg(args.grant_id!)}`) });
        return { app_id: args.app_id, grant_id: args.grant_id, revoked: true };
      },
    }),
  }),
  defineTool({
    name: "transfer", annotations: hints("Manage App Ownership Transfer", "F", "T", "F", "F"),
    description: "Hand an app to another person: start (email; keep_as_member, default true) mails an offer they must accept — nothing moves until then; status; cancel.",
    input: transferInput,
    run: byAction<TransferArgs>("transfer", {
      start: async (args, host) => {
        need(args, "start", "email");
        const started = await relay(host, { method: "POST", path: under(args.app_id, "/transfer"), body: present({ email: args.email, keep_as_member: args.keep_as_member }) });
        return { ...(started as object), ownership_moved: false, note: "Nothing has moved yet: the recipient must accept the emailed offer. Poll with action status." };
      },
      status: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/transfer") }),
      cancel: async (args, host) => {
        await relay(host, { method: "DELETE", path: under(args.app_id, "/transfer") });
        return { app_id: args.app_id, cancelled: true };
      },
    }),
  }),
  defineTool({
    name: "credentials", annotations: hints("Manage App Service Credentials", "F", "T", "F", "F"),
    description: "Scoped service credentials for a backend you host: mint (mode explicit|following, grants [{ collection, ops, scope? }], members, label, ttl_seconds or null), list, pause, resume, rotate (overlap_seconds), revoke — the last four by credential_id. The token is shown once. Effective rights = the allowlist within the owner's own.",
    input: credentialsInput,
    run: byAction<CredentialsArgs>("credentials", {
      mint: (args, host) => relay(host, {
        method: "POST", path: under(args.app_id, "/credentials"),
        body: present({ mode: args.mode, grants: args.grants, members: args.members, label: args.label, ttl_seconds: args.ttl_seconds }),
      }),
      list: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/credentials") }),
      pause: (args, host) => credentialSwitch(args, host, "pause"),
      resume: (args, host) => credentialSwitch(args, host, "resume"),
      rotate: (args, host) => relay(host, { method: "POST", path: credentialPath(args, "/rotate"), body: present({ overlap_seconds: args.overlap_seconds }) }),
      revoke: async (args, host) => {
        await relay(host, { method: "DELETE", path: credentialPath(args) });
        return { app_id: args.app_id, credential_id: args.credential_id, revoked: true };
      },
    }),
  }),
];
