/**
 * An app's links to other services (WIRE-MCP §2.16–2.17): `connections` (stored
 * credentials that webhook rules authenticate with; snake_case arguments, camelCase HTTP
 * bodies) and `ingest` (the manifest's inbound hooks: list, rotate, signing secrets).
 */
import * as z from "zod";
import { byAction, defineTool, hints, need, present, relay, required, type ToolDef } from "../define";
import { seg } from "../relay-call";

const under = (appId: string, suffix: string) => `/v1/apps/${seg(appId)}${suffix}`;

const connectionsInput = z.strictObject({
  action: z.enum(["create", "list", "delete", "consent_url"]), app_id: required,
  name: z.string().optional(), kind: z.enum(["static", "oauth2"]).optional(), provider: z.string().optional(), label: z.string().optional(),
  allowed_host: z.string().optional(), header_name: z.string().optional(), header_value: z.string().optional(),
  authorize_url: z.string().optional(), token_endpoint: z.string().optional(), client_id: z.string().optional(), client_secret: z.string().optional(),
  scopes: z.string().optional(), auth_scheme: z.string().optional(), instance_field: z.string().optional(),
  auth_params: z.record(z.string(), z.unknown()).optional(), token_params: z.record(z.string(), z.unknown()).optional(),
});
type ConnectionsArgs = z.infer<typeof connectionsInput>;

const ingestInput = z.strictObject({
  action: z.enum(["list", "rotate", "set_signing_secret", "clear_signing_secret"]), app_id: required,
  name: z.string().optional(), secret: z.string().optional(), grace_seconds: z.number().optional(),
});
type IngestArgs = z.infer<typeof ingestInput>;

function connectionBody(args: ConnectionsArgs): Record<string, unknown> {
  const common = { name: args.name, allowedHost: args.allowed_host, provider: args.provider, label: args.label };
  if (args.kind === "oauth2") {
    need(args, "create oauth2", "name", "allowed_host", "authorize_url", "token_endpoint", "client_id", "client_secret");
    return present({
      ...common, kind: "oauth2", authorizeUrl: args.authorize_url, tokenEndpoint: args.token_endpoint, clientId: args.client_id, clientSecret: args.client_secret,
      scopes: args.scopes, authScheme: args.auth_scheme, instanceField: args.instance_field, authParams: args.auth_params, tokenParams: args.token_params,
    });
  }
  need(args, "create", "name", "allowed_host", "header_value");
  return present({ ...common, kind: "static", headerValue: args.header_value, headerName: args.header_name ?? "Authorization" });
}

const hookPath = (args: IngestArgs, suffix: string) => {
  need(args, args.action, "name");
  return under(args.app_id, `/ingest-hooks/${seg(args.name!)}${suffix}`);
};

export const integrationTools: ToolDef[] = [
  defineTool({
    name: "connections", annotations: hints("Manage App Connections", "F", "T", "F", "F"),
    description: "Host-bound stored credentials that the manifest's webhook rules authenticate with: create (static: name, allowed_host, header_value, header_name; oauth2: name, allowed_host, authorize_url, token_endpoint, client_id, client_secret, scopes…), list, delete (name), consent_url (name: the link the owner opens to consent to an oauth2 connection). No update: delete and create. Secrets are never returned.",
    input: connectionsInput,
    run: byAction<ConnectionsArgs>("connections", {
      create: (args, host) => relay(host, { method: "POST", path: under(args.app_id, "/connections"), body: connectionBody(args) }),
      list: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/connections") }),
      delete: async (args, host) => {
        need(args, "delete", "name");
        await relay(host, { method: "DELETE", path: under(args.app_id, `/connections/${seg(args.name!)}`) });
        return { app_id: args.app_id, name: args.name, deleted: true };
      },
      consent_url: async (args, host) => {
        need(args, "consent_url", "name");
        return { app_id: args.app_id, name: args.name, authorize_url: `${host.relay.apiOrigin}${under(args.app_id, `/connections/${seg(args.name!)}/authorize`)}` };
      },
    }),
  }),
  defineTool({
    name: "ingest", annotations: hints("Manage App Inbound Hooks", "F", "T", "-", "F"),
    description: "The app's inbound hooks (declared in the manifest's ingest[], created at deploy): list (with their secret URLs), rotate (name; the old URL dies at once), set_signing_secret (name; secret, or none to mint one shown once; grace_seconds), clear_signing_secret (name).",
    input: ingestInput,
    run: byAction<IngestArgs>("ingest", {
      list: (args, host) => relay(host, { method: "GET", path: under(args.app_id, "/ingest-hooks") }),
      rotate: (args, host) => relay(host, { method: "POST", path: hookPath(args, "/rotate") }),
      set_signing_secret: (args, host) => relay(host, { method: "PUT", path: hookPath(args, "/signing-secret"), body: present({ secret: args.secret, graceSeconds: args.grace_seconds }) }),
      clear_signing_secret: (args, host) => relay(host, { method: "DELETE", path: hookPath(args, "/signing-secret") }),
    }),
  }),
];
