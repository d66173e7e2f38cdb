/**
 * App slugs: the DNS label an app is served under (`<slug>.<APPS_DOMAIN>`). A caller may
 * choose one for private and public apps; link apps always get a long random slug so the
 * address itself cannot be guessed. Slugs are unique and never change.
 */
import { RelayError } from "../errors";

const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;

/** Names that would look like the relay's own hosts, or invite phishing. */
export const RESERVED_SLUGS = new Set([
  "www", "api", "app", "apps", "admin", "administrator", "console", "dashboard", "auth", "login", "logout", "signin",
  "signup", "account", "accounts", "mail", "email", "smtp", "imap", "static", "assets", "cdn", "media", "files",
  "docs", "help", "support", "status", "blog", "about", "security", "relay", "service", "svc", "root", "system",
  "test", "localhost", "device", "authorize", "oauth", "billing", "settings", "internal", "public", "private",
]);

export function validateSlug(slug: string): void {
  if (!SLUG_PATTERN.test(slug)) {
    throw new RelayError("invalid_request", "A slug is 3–63 characters of a–z, 0–9 and inner hyphens.", { field: "slug" });
  }
  if (slug.includes("--")) {
    throw new RelayError("invalid_request", "A slug may not contain two hyphens in a row.", { field: "slug" });
  }
  if (RESERVED_SLUGS.has(slug)) {
    throw new RelayError("invalid_request", `The slug "${slug}" is reserved.`, { field: "slug" });
  }
}

function randomBase36(length: number): string {
  return [...crypto.getRandomValues(new Uint8Array(length))].map((b) => (b % 36).toString(36)).join("");
}

/** Link apps: 24 random base36 characters (about 124 bits), starting with a letter. */
export function unguessableSlug(): string {
  return `l${randomBase36(23)}`;
}

/** A name as lowercase letters, digits and single inner hyphens, at most `maxLength` characters. */
export function slugStem(name: string, maxLength: number): string {
  return name.normalize("NFKD").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, maxLength).replace(/-+$/g, "");
}

/** Private and public apps without a chosen slug: readable stem from the app name plus a short suffix. */
export function friendlySlug(name: string | null | undefined): string {
  const stem = slugStem(name ?? "app", 40);
  const base = stem.length >= 2 && !RESERVED_SLUGS.has(stem) ? stem : "app";
  return `${base}-${randomBase36(6)}`;
}
