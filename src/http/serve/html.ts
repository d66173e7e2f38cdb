/**
 * Escaping for the few strings the relay writes into app-origin HTML itself (app name,
 * description, icon, inline JSON in attributes). Everything written into a page goes
 * through one of these.
 */

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

/** JSON for a double-quoted attribute: escaped so no quote or tag can end it early. */
export function jsonAttribute(value: unknown): string {
  return escapeHtml(JSON.stringify(value));
}
