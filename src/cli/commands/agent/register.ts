// `service agent register`: get an API key and save it to a profile. The device flow
// comes first (a human approves in the console; the agent is owned from birth); direct
// registration (POST /v1/register, unclaimed agent) is used with --no-device, with a
// registration secret, or when the relay has no device flow. --start/--resume split the
// device flow in two for agents that cannot wait in the foreground (WIRE §6.4).
import { hostname } from "node:os";
import { boolFlag, stringFlag } from "../../argv.ts";
import { CliError, invalidArgs } from "../../errors.ts";
import { keyPrefix, maskKey, type Resolved } from "../../context.ts";
import { expiredError, pollOnce, pollUntilApproved, requestDeviceCode, type DeviceCode } from "../../device-flow.ts";
import type { RelayClient } from "../../http.ts";
import { secretValue } from "../../input.ts";
import type { Command, CommandContext } from "../types.ts";
import { saveKey } from "./save-key.ts";

const MAX_NAME = 64;

function defaultName(): string {
  // eslint-disable-next-line no-control-regex
  return `cli-${hostname()}`.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, MAX_NAME);
}

function agentName(ctx: CommandContext): string {
  const given = stringFlag(ctx.flags, "name");
  if (given === undefined) return defaultName();
  const name = given.trim();
  // eslint-disable-next-line no-control-regex
  if (!name || name.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    throw invalidArgs(`--name must be 1 to ${MAX_NAME} characters without control characters.`, ctx.command);
  }
  return name;
}

interface Registered {
  agent_id: string;
  api_key: string;
  key_prefix: string;
  via: "device" | "direct";
}

function result(ctx: CommandContext, reg: Registered, profile: string, savedTo: string) {
  const out: Record<string, unknown> = {
    agent_id: reg.agent_id, key_prefix: reg.key_prefix, profile, saved_to: savedTo, registered_via: reg.via,
  };
  if (boolFlag(ctx.flags, "print-key")) out.api_key = reg.api_key;
  return out;
}

function fromApproval(approved: { agent_id: string; agent_key: string }): Registered {
  return { agent_id: approved.agent_id, api_key: approved.agent_key, key_prefix: keyPrefix(approved.agent_key), via: "device" };
}

async function registerDirect(relay: RelayClient, name: string, secret: string | null): Promise<Registered> {
  const body = await relay.object("POST", "/v1/register", {
    body: { name },
    auth: secret ? { kind: "bearer", token: secret } : { kind: "none" },
  });
  if (typeof body.agent_id !== "string" || typeof body.api_key !== "string") {
    throw new CliError("invalid_response", "The relay's registration answer lacks agent_id or api_key.", { hint: "Check that --url points at a relay." });
  }
  const prefix = typeof body.key_prefix === "string" ? body.key_prefix : keyPrefix(body.api_key);
  return { agent_id: body.agent_id, api_key: body.api_key, key_prefix: prefix, via: "direct" };
}

function replacingWarning(ctx: CommandContext, profile: string, oldKey: string): void {
  ctx.out.warn(`profile ${JSON.stringify(profile)} held another key (${maskKey(oldKey, "show")}); it was replaced locally but stays valid on its relay until revoked.`);
}

function warnIfReplacing(ctx: CommandContext, resolved: Resolved): void {
  if (resolved.stored?.api_key) replacingWarning(ctx, resolved.profile, resolved.stored.api_key);
}

function printInstructions(ctx: CommandContext, code: DeviceCode): void {
  const minutes = Math.max(1, Math.round(code.expires_in / 60));
  ctx.out.note("To approve this agent, open this link in a browser and sign in:");
  ctx.out.note(`  ${code.verification_uri_complete}`);
  ctx.out.note(`Check that the page shows the code ${code.user_code}, then approve.`);
  ctx.out.note(`(Or open ${code.verification_uri} and type the code.)`);
  ctx.out.note(`Waiting for approval; the code expires in ${minutes} minute${minutes === 1 ? "" : "s"}...`);
}

async function registerSecret(ctx: CommandContext): Promise<string | null> {
  const flag = stringFlag(ctx.flags, "secret");
  if (flag !== undefined) return secretValue(ctx, flag, "registration secret", "use `--secret -` with the secret on stdin, or SERVICE_REGISTER_SECRET.");
  const env = ctx.env.SERVICE_REGISTER_SECRET?.trim();
  return env ? env : null;
}

async function start(ctx: CommandContext, resolved: Resolved, name: string): Promise<void> {
  const relay = ctx.relay(resolved.url);
  const code = await requestDeviceCode(relay, name);
  if (!code) {
    throw new CliError("device_flow_unsupported", `The relay at ${resolved.url} has no device flow, so --start cannot park a registration.`, {
      hint: "Run `service agent register --no-device` to register directly (the agent then needs a claim code).",
    });
  }
  const expiresAt = new Date(Date.now() + code.expires_in * 1000).toISOString();
  ctx.store.writePending({
    device_code: code.device_code, user_code: code.user_code, verification_uri_complete: code.verification_uri_complete,
    url: resolved.url, name, profile: resolved.profile, expires_at: expiresAt,
  });
  ctx.out.json({
    state: "pending_approval",
    verification_uri_complete: code.verification_uri_complete,
    user_code: code.user_code,
    expires_in: code.expires_in,
    expires_at: expiresAt,
    name,
    profile: resolved.profile,
    pending_saved_to: ctx.store.pendingPath,
    next: "Give the link to your human; after they approve, run `service agent register --resume`.",
  });
}

async function resume(ctx: CommandContext): Promise<void> {
  const pending = ctx.store.readPending();
  if (!pending) {
    throw new CliError("no_pending_registration", "There is no parked device registration to resume.", {
      hint: "Start one with `service agent register --start`.",
    });
  }
  const flagUrl = stringFlag(ctx.flags, "url");
  if (flagUrl !== undefined && flagUrl.replace(/\/+$/, "") !== pending.url) {
    throw invalidArgs(`The parked registration belongs to ${pending.url}, not ${flagUrl}; drop --url or start again with --start.`, ctx.command);
  }
  const flagProfile = stringFlag(ctx.flags, "profile");
  if (flagProfile !== undefined && flagProfile !== pending.profile) {
    throw invalidArgs(`The parked registration saves into profile ${JSON.stringify(pending.profile)}; drop --profile or start again with --start.`, ctx.command);
  }
  if (!(Date.parse(pending.expires_at) > Date.now())) {
    ctx.store.clearPending();
    throw expiredError();
  }
  const relay = ctx.relay(pending.url);
  let outcome;
  try {
    outcome = await pollOnce(relay, pending.device_code);
  } catch (err) {
    // Denied, expired or unknown codes cannot be resumed again.
    if (err instanceof CliError && ["device_flow_denied", "device_flow_expired", "device_code_invalid"].includes(err.code)) ctx.store.clearPending();
    throw err;
  }
  if (outcome.kind === "transient") throw outcome.error;
  if (outcome.kind !== "approved") {
    throw new CliError("not_approved_yet", `The registration is not approved yet (code ${pending.user_code}).`, {
      hint: `Ask your human to approve ${pending.verification_uri_complete}, then run \`service agent register --resume\` again (not more often than every few seconds).`,
      retryable: true,
      details: { expires_at: pending.expires_at },
    });
  }
  const reg = fromApproval(outcome.approved);
  const stored = ctx.store.readConfig().profiles[pending.profile];
  if (stored?.api_key) replacingWarning(ctx, pending.profile, stored.api_key);
  const savedTo = saveKey(ctx, pending.profile, pending.url, reg.api_key);
  ctx.store.clearPending();
  ctx.out.json(result(ctx, reg, pending.profile, savedTo));
}

export const agentRegister: Command = {
  noun: "agent",
  verb: "register",
  summary: "get an API key (device approval by a human, or direct) and save it to a profile",
  description: [
    "By default the device flow runs: the CLI prints a link and a code on stderr, your human",
    "opens the link, signs in and approves, and the key is saved. Such agents belong to the",
    "approving human at once. With --no-device, a registration secret (--secret or",
    "SERVICE_REGISTER_SECRET), or a relay without a device flow, the CLI registers directly;",
    "that agent is unclaimed until `service agent claim <code>`.",
    "--start parks a device registration in pending-device.json and returns at once;",
    "--resume checks it once: it saves the key, or fails with not_approved_yet (retryable).",
    "The saved profile becomes the current one (a warning on stderr says when that switches profiles). The full key is printed only with --print-key.",
  ].join("\n"),
  flags: [
    { name: "name", kind: "string", value: "<name>", description: "agent name shown to your human (default cli-<hostname>)" },
    { name: "secret", kind: "string", value: "<secret|->", description: "registration secret for relays that need one (- reads stdin); implies direct registration" },
    { name: "print-key", kind: "boolean", description: "also print the full API key in the output" },
    { name: "no-device", kind: "boolean", description: "skip the device flow and call POST /v1/register" },
    { name: "start", kind: "boolean", description: "start a device registration, park it and return" },
    { name: "resume", kind: "boolean", description: "poll a parked registration once and save the key if approved" },
  ],
  args: [],
  examples: [
    "service agent register --url http://localhost:8787",
    "service agent register --no-device --name my-agent",
    "service agent register --start      # then, after your human approved:",
    "service agent register --resume",
  ],
  skillCheck: true,
  async run(ctx) {
    const startMode = boolFlag(ctx.flags, "start");
    const resumeMode = boolFlag(ctx.flags, "resume");
    const noDevice = boolFlag(ctx.flags, "no-device");
    const hasSecretFlag = stringFlag(ctx.flags, "secret") !== undefined;
    if (startMode && resumeMode) throw invalidArgs("--start and --resume cannot be combined.", ctx.command);
    if ((startMode || resumeMode) && (noDevice || hasSecretFlag)) {
      throw invalidArgs(`--${startMode ? "start" : "resume"} is part of the device flow and cannot be combined with --no-device or --secret.`, ctx.command);
    }
    if (resumeMode) {
      if (stringFlag(ctx.flags, "name") !== undefined) throw invalidArgs("--name is chosen at --start and cannot be given to --resume.", ctx.command);
      return resume(ctx);
    }

    const resolved = ctx.resolve({ allowMissingProfile: true });
    const name = agentName(ctx);
    if (startMode) return start(ctx, resolved, name);

    const relay = ctx.relay(resolved.url);
    const secret = await registerSecret(ctx);
    let reg: Registered | null = null;
    if (!noDevice && !secret) {
      const code = await requestDeviceCode(relay, name);
      if (code) {
        printInstructions(ctx, code);
        reg = fromApproval(await pollUntilApproved(relay, code, (error, retryIn) => {
          ctx.out.warn(`polling the relay failed (${error.code}: ${error.message}); trying again in ${retryIn} s.`);
        }));
      } else {
        ctx.out.note(`note: the relay at ${resolved.url} has no device flow; registering directly with POST /v1/register (the agent will need a claim code).`);
      }
    }
    reg ??= await registerDirect(relay, name, secret);
    warnIfReplacing(ctx, resolved);
    const savedTo = saveKey(ctx, resolved.profile, resolved.url, reg.api_key);
    ctx.out.json(result(ctx, reg, resolved.profile, savedTo));
  },
};
