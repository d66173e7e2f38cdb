/**
 * Semantic version ordering, shared by the relay (the 426 gate on old CLIs) and the CLI
 * (is the relay's skill guide newer than the copy read?). Pure, no dependencies.
 */

function parts(version: string): number[] | null {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return match ? match.slice(1).map(Number) : null;
}

/** Negative when a < b. Unparseable versions sort lowest. */
export function compareVersions(a: string, b: string): number {
  const left = parts(a);
  const right = parts(b);
  if (!left || !right) return left ? 1 : right ? -1 : 0;
  for (let i = 0; i < 3; i++) if (left[i] !== right[i]) return left[i] - right[i];
  return 0;
}
