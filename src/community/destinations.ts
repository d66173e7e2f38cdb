/**
 * What a template would carry out of an installer's app, worked out from the published
 * manifest before anyone reviews it (pure; WIRE §2.10). Two answers:
 * - the refusals: things a template may not carry at all (a webhook with a literal `url`,
 *   which would send every installer's rows to the publisher's endpoint; a non-empty
 *   `embedAncestors`; any `agentTasks`, which would hand installers' rows to an agent);
 * - the external destinations the reviewer sees: webhook targets (from a setting, or
 *   through a connection), embedded origins, hosts the page may fetch, connections.
 */
import type { CompiledManifest } from "../manifest";
import type { ExternalDestination } from "./snapshots";

export interface Refusal {
  field: string;
  message: string;
}

/** Marks a destination the installer chooses (a webhook URL read from a setting). */
export const INSTALLER_CHOSEN_HOST = "*";

export function publishRefusals(manifest: CompiledManifest): Refusal[] {
  const refusals: Refusal[] = [];
  manifest.webhooks.forEach((rule, index) => {
    if (rule.url !== null) {
      refusals.push({ field: `manifest.webhooks.${index}.url`, message: `webhook rule ${index} sends to a literal url; a template must read its target from a setting (urlFromSetting)` });
    }
  });
  if (manifest.embedAncestors.length > 0) {
    refusals.push({ field: "manifest.embedAncestors", message: "embedAncestors must be empty in a template" });
  }
  if (manifest.agentTasks.length > 0) {
    refusals.push({ field: "manifest.agentTasks", message: "a template may not declare agentTasks" });
  }
  return refusals;
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}

/** The app's stored connections, as far as destinations go: a name and the one host it reaches. */
export interface ConnectionHost {
  name: string;
  allowedHost: string;
}

export function externalDestinations(manifest: CompiledManifest, connections: ConnectionHost[]): ExternalDestination[] {
  const hostOfConnection = new Map(connections.map((connection) => [connection.name, connection.allowedHost]));
  const found: ExternalDestination[] = [];
  for (const rule of manifest.webhooks) {
    const viaConnection = rule.connection ?? undefined;
    const host = rule.url !== null ? hostOf(rule.url)
      : viaConnection !== undefined && hostOfConnection.has(viaConnection) ? hostOfConnection.get(viaConnection)!
      : INSTALLER_CHOSEN_HOST;
    found.push({
      kind: "webhook", host,
      ...(rule.urlFromSetting !== null ? { fromSetting: rule.urlFromSetting } : {}),
      ...(viaConnection !== undefined ? { viaConnection } : {}),
    });
  }
  for (const origin of manifest.embeds) found.push({ kind: "embed", host: hostOf(origin) });
  for (const origin of manifest.externalHosts) found.push({ kind: "fetch", host: hostOf(origin) });
  for (const connection of connections) found.push({ kind: "fetch", host: connection.allowedHost, viaConnection: connection.name });
  const seen = new Set<string>();
  return found.filter((destination) => {
    const identity = JSON.stringify(destination);
    if (seen.has(identity)) return false;
    seen.add(identity);
    return true;
  });
}

/** Destinations in `next` that `previous` did not have (compared by kind and host). */
export function newDestinations(previous: ExternalDestination[], next: ExternalDestination[]): ExternalDestination[] {
  const known = new Set(previous.map((destination) => `${destination.kind} ${destination.host}`));
  return next.filter((destination) => !known.has(`${destination.kind} ${destination.host}`));
}
