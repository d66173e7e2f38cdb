/**
 * How a webhook target is shown to people (the delivery journal's `url`, WIRE §2.6, and
 * the failure mail): host and path only, so a secret in its query or fragment is never
 * shown again. A target that is not an absolute URL (a relative url whose connection had
 * no instance base, a setting that held no URL) is shown up to its query.
 */
export function hostAndPath(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return url.split(/[?#]/)[0];
  }
}
