// The client half of the RFC 8628 device flow (WIRE §6.4): ask for a code, then poll
// /v1/device/token at the relay's interval until a human approves or denies it or it
// expires. The poll answers in the RFC's string `error` form, so it is read before the
// usual envelope. Used by `agent register` in one go and by its --start/--resume split.
import { CliError } from "./errors.ts";
import { errorFromResponse, parseJsonBody, type RelayClient } from "./http.ts";

export const DEFAULT_EXPIRES_IN = 900;
export const DEFAULT_INTERVAL = 5;
const SLOW_DOWN_STEP = 5;

export interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface Approved {
  agent_id: string;
  agent_key: string;
  name: string | null;
}

export type PollOutcome =
  | { kind: "approved"; approved: Approved }
  | { kind: "pending" }
  | { kind: "slow_down" }
  /** The poll never got an answer from the relay itself (network, 502/503/504). */
  | { kind: "transient"; error: CliError };

const TRANSIENT_STATUSES = new Set([502, 503, 504]);

export function deniedError(): CliError {
  return new CliError("device_flow_denied", "The human denied this registration.", {
    hint: "Ask your human why, then run `service agent register` again if they agree.",
  });
}

export function expiredError(): CliError {
  return new CliError("device_flow_expired", "The device code expired before it was approved.", {
    hint: "Run `service agent register` again for a fresh code and give the new link to your human.",
  });
}

/** POST /v1/device/code. Null when the relay has no device flow (404). */
export async function requestDeviceCode(relay: RelayClient, name: string): Promise<DeviceCode | null> {
  const res = await relay.raw("POST", "/v1/device/code", { body: { name } });
  if (res.status === 404) return null;
  if (res.status !== 200) {
    if (res.status >= 200 && res.status < 300) {
      throw new CliError("invalid_response", `The relay answered the device-code request with HTTP ${res.status}; only 200 is valid.`, { hint: "Check that --url points at a relay." });
    }
    throw errorFromResponse(res);
  }
  const body = parseJsonBody(res) as Partial<DeviceCode> | null;
  if (!body || typeof body.device_code !== "string" || typeof body.user_code !== "string") {
    throw new CliError("invalid_response", "The relay's device-code answer lacks device_code or user_code.", { hint: "Check that --url points at a relay." });
  }
  const uri = typeof body.verification_uri === "string" ? body.verification_uri : `${relay.baseUrl}/device`;
  return {
    device_code: body.device_code,
    user_code: body.user_code,
    verification_uri: uri,
    verification_uri_complete: typeof body.verification_uri_complete === "string" ? body.verification_uri_complete : `${uri}?code=${encodeURIComponent(body.user_code)}`,
    expires_in: positive(body.expires_in, DEFAULT_EXPIRES_IN),
    interval: positive(body.interval, DEFAULT_INTERVAL),
  };
}

/** One POST /v1/device/token. Denied and expired answers throw their CLI errors. */
export async function pollOnce(relay: RelayClient, deviceCode: string): Promise<PollOutcome> {
  let res;
  try {
    res = await relay.raw("POST", "/v1/device/token", { body: { device_code: deviceCode } });
  } catch (err) {
    if (err instanceof CliError && err.code === "fetch_error") return { kind: "transient", error: err };
    throw err;
  }
  if (res.status === 200) {
    const body = parseJsonBody(res) as Partial<Approved> | null;
    if (!body || typeof body.agent_id !== "string" || typeof body.agent_key !== "string") {
      throw new CliError("invalid_response", "The relay's device-token answer lacks agent_id or agent_key.", { hint: "Check that --url points at a relay." });
    }
    return { kind: "approved", approved: { agent_id: body.agent_id, agent_key: body.agent_key, name: typeof body.name === "string" ? body.name : null } };
  }
  if (res.status === 429) return { kind: "slow_down" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    parsed = undefined;
  }
  const rfc = typeof parsed === "object" && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
  if (typeof rfc === "string") {
    if (rfc === "authorization_pending") return { kind: "pending" };
    if (rfc === "slow_down") return { kind: "slow_down" };
    if (rfc === "access_denied") throw deniedError();
    if (rfc === "expired_token") throw expiredError();
  }
  if (TRANSIENT_STATUSES.has(res.status)) return { kind: "transient", error: errorFromResponse(res) };
  if (res.status >= 200 && res.status < 300) {
    throw new CliError("invalid_response", `The relay answered the device-token poll with HTTP ${res.status}; only 200 is valid.`, { hint: "Check that --url points at a relay." });
  }
  throw errorFromResponse(res);
}

/**
 * Polls until approved; sleeps `interval` before each poll, +5 s on slow_down or 429.
 * A poll that got no answer from the relay itself (network failure, 502/503/504) is
 * retried at the next interval with a warning rather than throwing away a code the
 * human may be approving right now; the code's deadline still ends the wait.
 */
export async function pollUntilApproved(
  relay: RelayClient,
  code: DeviceCode,
  onTransient: (error: CliError, retryInSeconds: number) => void = () => {},
  sleep: (ms: number) => Promise<void> = delay,
): Promise<Approved> {
  const deadline = Date.now() + code.expires_in * 1000;
  let interval = code.interval;
  for (;;) {
    await sleep(interval * 1000);
    if (Date.now() >= deadline) throw expiredError();
    const outcome = await pollOnce(relay, code.device_code);
    if (outcome.kind === "approved") return outcome.approved;
    if (outcome.kind === "slow_down") interval += SLOW_DOWN_STEP;
    if (outcome.kind === "transient") onTransient(outcome.error, interval);
  }
}

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
