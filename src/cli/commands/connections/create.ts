// `service connections create --app <app> --name <name> --allowed-host <host> …`: POST
// /v1/apps/:id/connections (spec C). A static connection sends one header (default
// Authorization) whose value comes from --header-value (`-` reads stdin) or
// SERVICE_CONNECTION_HEADER_VALUE; an oauth2 connection names the provider's endpoints
// and client, its secret from --client-secret or SERVICE_CONNECTION_CLIENT_SECRET, and
// waits for the owner's consent (`service connections authorize-url`). Flags of the other
// kind are refused here, before anything is sent. Prints the relay's `{ connection }`.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command, CommandContext } from "../types.ts";
import { jsonFlag } from "../credentials/common.ts";
import { APP_FLAG, NAME_FLAG, appTarget, connectionName, connectionsPath, requiredFlag, secretFlag } from "./common.ts";

const STATIC_ONLY = ["header-value"];
const OAUTH2_ONLY = ["authorize-url", "token-url", "client-id", "client-secret", "scopes", "auth-scheme", "instance-field", "auth-params", "token-params"];
/** Flags that may read stdin with `-`; only one at a time can. */
const STDIN_FLAGS = ["header-value", "client-secret", "auth-params", "token-params"];

function refuseOtherKind(ctx: CommandContext, kind: string, flags: string[]): void {
  const stray = flags.find((flag) => ctx.flags[flag] !== undefined);
  if (stray !== undefined) throw invalidArgs(`--${stray} is not for a ${kind} connection.`, ctx.command, { flag: `--${stray}` });
}

/** A JSON-object flag (inline, @file, a path, or `-`), or undefined when absent. */
async function objectFlag(ctx: CommandContext, flag: string): Promise<Record<string, unknown> | undefined> {
  const value = await jsonFlag(ctx, flag);
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgs(`--${flag} must be a JSON object of extra parameters, such as {"prompt":"consent"}.`, ctx.command, { flag: `--${flag}` });
  }
  return value as Record<string, unknown>;
}

/** The oauth2 half of the body; the client secret must come from somewhere. */
async function oauth2Fields(ctx: CommandContext): Promise<Record<string, unknown>> {
  const clientSecret = await secretFlag(ctx, "client-secret", "SERVICE_CONNECTION_CLIENT_SECRET", "client secret");
  if (clientSecret === undefined) {
    throw invalidArgs("An oauth2 connection needs --client-secret <secret|-> or SERVICE_CONNECTION_CLIENT_SECRET.", ctx.command, { flag: "--client-secret" });
  }
  const optional = { scopes: stringFlag(ctx.flags, "scopes"), authScheme: stringFlag(ctx.flags, "auth-scheme"), instanceField: stringFlag(ctx.flags, "instance-field") };
  return {
    authorizeUrl: requiredFlag(ctx, "authorize-url"), tokenEndpoint: requiredFlag(ctx, "token-url"), clientId: requiredFlag(ctx, "client-id"), clientSecret,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    ...Object.fromEntries(Object.entries({ authParams: await objectFlag(ctx, "auth-params"), tokenParams: await objectFlag(ctx, "token-params") }).filter(([, v]) => v !== undefined)),
  };
}

export const connectionsCreate: Command = {
  noun: "connections",
  verb: "create",
  summary: "create a static or oauth2 connection bound to one host",
  description: [
    "A connection is a credential the app's webhooks send, only ever to --allowed-host: an exact host",
    "(api.example.com) or one leftmost wildcard label (*.example.com). Secrets are never shown again,",
    "only a fingerprint. There is no update: delete and create again.",
    "",
    "static: --header-value <value|-> (or SERVICE_CONNECTION_HEADER_VALUE) is sent as --header-name",
    "(default Authorization); give the whole value, e.g. \"Bearer sk_...\".",
    "oauth2: --authorize-url, --token-url, --client-id and --client-secret <secret|-> (or",
    "SERVICE_CONNECTION_CLIENT_SECRET); the connection is pending_auth until the owner consents at",
    "the link `service connections authorize-url` prints (register {relay}/oauth/connections/callback",
    "as the redirect URI with the provider). The access token is sent as \"<auth scheme> <token>\".",
    "--auth-params and --token-params take a JSON object (inline, @file, a path, or - for stdin).",
  ].join("\n"),
  flags: [
    APP_FLAG,
    NAME_FLAG,
    { name: "allowed-host", kind: "string", value: "<host>", description: "the only host the header is sent to (required)" },
    { name: "kind", kind: "string", value: "static|oauth2", description: "the kind of connection (default static)" },
    { name: "provider", kind: "string", value: "<text>", description: "who provides the API, for people reading the list" },
    { name: "label", kind: "string", value: "<text>", description: "a label for people reading the list" },
    { name: "header-name", kind: "string", value: "<name>", description: "the header to send (default Authorization)" },
    { name: "header-value", kind: "string", value: "<value|->", description: "static: the header's value (required, or SERVICE_CONNECTION_HEADER_VALUE)" },
    { name: "authorize-url", kind: "string", value: "<url>", description: "oauth2: the provider's authorization endpoint (required)" },
    { name: "token-url", kind: "string", value: "<url>", description: "oauth2: the provider's token endpoint (required)" },
    { name: "client-id", kind: "string", value: "<id>", description: "oauth2: the client id (required)" },
    { name: "client-secret", kind: "string", value: "<secret|->", description: "oauth2: the client secret (required, or SERVICE_CONNECTION_CLIENT_SECRET)" },
    { name: "scopes", kind: "string", value: "<a b>", description: "oauth2: space-delimited scopes to ask for" },
    { name: "auth-scheme", kind: "string", value: "<word>", description: "oauth2: the word before the token (default Bearer)" },
    { name: "instance-field", kind: "string", value: "<field>", description: "oauth2: the token-response field holding the API base URL" },
    { name: "auth-params", kind: "string", value: "<json>", description: "oauth2: extra authorization request parameters" },
    { name: "token-params", kind: "string", value: "<json>", description: "oauth2: extra token request parameters" },
  ],
  args: [],
  examples: [
    "printenv CRM_KEY | service connections create --app my-app --name crm --allowed-host api.crm.example --header-value -",
    "SERVICE_CONNECTION_CLIENT_SECRET=… service connections create --app my-app --name calendar --kind oauth2 --allowed-host '*.example.com' --authorize-url https://auth.example.com/authorize --token-url https://auth.example.com/token --client-id abc --scopes 'calendar.read'",
  ],
  skillCheck: true,
  async run(ctx) {
    const name = connectionName(ctx);
    const allowedHost = requiredFlag(ctx, "allowed-host");
    const kind = stringFlag(ctx.flags, "kind") ?? "static";
    if (kind !== "static" && kind !== "oauth2") throw invalidArgs(`--kind must be static or oauth2; got ${JSON.stringify(kind)}.`, ctx.command, { flag: "--kind" });
    const fromStdin = STDIN_FLAGS.filter((flag) => ctx.flags[flag] === "-");
    if (fromStdin.length > 1) throw invalidArgs(`Only one flag can read stdin; got ${fromStdin.map((f) => `--${f} -`).join(" and ")}.`, ctx.command);
    refuseOtherKind(ctx, kind, kind === "static" ? OAUTH2_ONLY : STATIC_ONLY);

    const body: Record<string, unknown> = { name, kind, allowedHost };
    for (const [field, flag] of [["provider", "provider"], ["label", "label"], ["headerName", "header-name"]] as const) {
      const value = stringFlag(ctx.flags, flag);
      if (value !== undefined) body[field] = value;
    }
    if (kind === "static") {
      body.headerName ??= "Authorization";
      const headerValue = await secretFlag(ctx, "header-value", "SERVICE_CONNECTION_HEADER_VALUE", "header value");
      if (headerValue === undefined) {
        throw invalidArgs("A static connection needs --header-value <value|-> or SERVICE_CONNECTION_HEADER_VALUE.", ctx.command, { flag: "--header-value" });
      }
      body.headerValue = headerValue;
    } else {
      Object.assign(body, await oauth2Fields(ctx));
    }
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("POST", connectionsPath(t), { auth: t.auth, body }));
  },
};
