/**
 * Rendering the templates a manifest's rules carry (WIRE §5.4), at fire time, against the
 * row that fired them. The manifest compiler checked their grammar at deploy; here only
 * values are put in. A webhook `bodyTemplate` gets each `{{field}}` replaced by the JSON
 * encoding of the row's value (missing → `null`), so the result is JSON by construction.
 */
import { PLACEHOLDER } from "../manifest/conditions";

function topLevel(data: unknown, field: string): unknown {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[field] : undefined;
}

/** A webhook body template with the row's values in place of its placeholders. */
export function renderJsonTemplate(template: string, data: unknown): string {
  return template.replace(PLACEHOLDER, (_match, field: string) => JSON.stringify(topLevel(data, field) ?? null));
}
