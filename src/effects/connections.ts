/**
 * What the webhook engine asks of connections: the header to put on one outbound request.
 * A connection's header goes only to its allowed host (WIRE §2.6, spec B: "bound to one
 * allowed host, never sent elsewhere"), only while the connection is active, and for
 * oauth2 only with an access token good for at least another minute (refreshed first when
 * it is not; a refresh the provider refuses flips the connection to `needs_reauth`).
 * Never throws: every refusal is a sentence for the delivery journal, and never carries a secret.
 * It also resolves a rule's relative url against the connection's captured instance base
 * (WIRE §6.1: an oauth2 connection with `instanceField`), when the rule fires.
 */
import { errorLogLine } from "../db/query-errors";
import { getConnection } from "../db/connections";
import { hostAllowed } from "../connections/allowed-host";
import { sealedPlace, unseal } from "../connections/sealing";
import { freshAccessToken } from "../connections/tokens";

export type ConnectionHeader = { ok: true; name: string; value: string } | { ok: false; error: string };

function targetHost(targetUrl: string): string | null {
  try {
    return new URL(targetUrl).hostname;
  } catch {
    return null;
  }
}

/**
 * The header to send to `targetUrl` for the app's connection `name`: refused (ok:false, a
 * journal-ready reason) when the connection is missing, not active, needs reauth, or the
 * target's host does not match allowedHost; refreshes an expired oauth2 token first.
 */
export async function connectionHeader(env: Env, appId: string, name: string, targetUrl: string): Promise<ConnectionHeader> {
  try {
    const row = await getConnection(env, appId, name);
    if (!row) return { ok: false, error: `connection "${name}" does not exist` };
    const host = targetHost(targetUrl);
    if (host === null) return { ok: false, error: `connection "${name}" not sent: the target is not a valid URL` };
    if (!hostAllowed(row.allowedHost, host)) {
      return { ok: false, error: `connection "${name}" is bound to ${row.allowedHost} and is never sent to ${host}` };
    }
    if (row.kind === "static") {
      if (row.status !== "active") return { ok: false, error: `connection "${name}" is ${row.status}` };
      return { ok: true, name: row.headerName, value: await unseal(env, sealedPlace(row.id, "secret"), row.secretSealed) };
    }
    const access = await freshAccessToken(env, row);
    if (!access.ok) return { ok: false, error: access.error };
    return { ok: true, name: row.headerName, value: `${row.authScheme ?? "Bearer"} ${access.token}` };
  } catch (err) {
    console.error("connection header failed", errorLogLine(err));
    return { ok: false, error: `connection "${name}" could not be read on the relay's side` };
  }
}

export type InstanceTarget = { url: string } | { failedWith: string };

/**
 * `path` (a rule's relative url) on the instance of the app's connection `name`: the
 * instance base the connection captured from its token response. Refused (a journal-ready
 * reason) when the rule names no connection, the connection is missing, has captured no
 * base yet (static, not authorized yet, or no instanceField) or the base is not an
 * http(s) URL. The result goes through the same outbound guard and allowedHost binding as
 * any other target when it is sent.
 */
export async function instanceTarget(env: Env, appId: string, name: string | null, path: string): Promise<InstanceTarget> {
  if (name === null) return { failedWith: `url ${path} is relative and the rule names no connection to resolve it against` };
  try {
    const row = await getConnection(env, appId, name);
    if (!row) return { failedWith: `connection "${name}" does not exist, so the relative url ${path} cannot be resolved` };
    if (!row.instanceBaseUrl) {
      return { failedWith: `connection "${name}" has no instance base URL yet (an oauth2 connection with instanceField captures it when the owner authorizes it), so the relative url ${path} cannot be resolved` };
    }
    let base: URL;
    try {
      base = new URL(row.instanceBaseUrl);
    } catch {
      return { failedWith: `connection "${name}" captured an instance base that is not a URL` };
    }
    if (base.protocol !== "https:" && base.protocol !== "http:") return { failedWith: `connection "${name}" captured an instance base that is not an http(s) URL` };
    const resolved = new URL(path, base);
    if (resolved.origin !== base.origin) return { failedWith: `the relative url ${path} leaves connection "${name}"'s instance` };
    return { url: resolved.href };
  } catch (err) {
    console.error("connection instance lookup failed", errorLogLine(err));
    return { failedWith: `connection "${name}" could not be read on the relay's side` };
  }
}
