/**
 * Rendering the templates a manifest's rules carry (WIRE §5.4), at fire time, against the
 * row that fired them. The manifest compiler checked their grammar at deploy; here only
 * values are put in. A webhook `bodyTemplate` gets each `{{field}}` replaced by the JSON
 * encoding of the row's value (missing → `null`), so the result is JSON by construction.
 * A plain-text `subject`/`body` (notify, schedules) gets the value as literal text.
 */
import { PLACEHOLDER } from "../manifest/conditions";

function topLevel(data: unknown, field: string): unknown {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>)[field] : undefined;
}

/** A webhook body template with the row's values in place of its placeholders. */
export function renderJsonTemplate(template: string, data: unknown): string {
  return template.replace(PLACEHOLDER, (_match, field: string) => JSON.stringify(topLevel(data, field) ?? null));
}

/** A value as literal text: strings as they are, numbers and booleans written out, lists and objects as JSON, missing or null as nothing. */
function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * A plain-text template with the row's values in place of its placeholders. A value is
 * inserted once, as literal text: braces inside it are never read as placeholders.
 */
export function renderTextTemplate(template: string, data: unknown): string {
  return template.replace(PLACEHOLDER, (_match, field: string) => asText(topLevel(data, field)));
}
