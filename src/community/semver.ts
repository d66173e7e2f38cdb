/**
 * Template versions are semver (WIRE §2.10: default `1.0.0`, strictly greater on
 * republish). Publishing, the upgrade offer and revert compare them here, by semver's
 * precedence: numeric core first, then a pre-release sorts below its release, and build
 * metadata is ignored.
 */

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function isSemver(text: string): boolean {
  return text.length <= 64 && SEMVER.test(text);
}

function identifierOrder(a: string, b: string): number {
  const numA = /^\d+$/.test(a);
  const numB = /^\d+$/.test(b);
  if (numA && numB) return Math.sign(Number(a) - Number(b));
  if (numA !== numB) return numA ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative when `a` comes before `b`, zero when equal in precedence, positive after. Both must be valid. */
export function compareSemver(a: string, b: string): number {
  const ma = SEMVER.exec(a);
  const mb = SEMVER.exec(b);
  if (!ma || !mb) throw new Error(`not semver: ${!ma ? a : b}`);
  for (let i = 1; i <= 3; i++) {
    const diff = Math.sign(Number(ma[i]) - Number(mb[i]));
    if (diff !== 0) return diff;
  }
  const preA = ma[4];
  const preB = mb[4];
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  const partsA = preA.split(".");
  const partsB = preB.split(".");
  for (let i = 0; i < Math.min(partsA.length, partsB.length); i++) {
    const diff = identifierOrder(partsA[i], partsB[i]);
    if (diff !== 0) return diff;
  }
  return Math.sign(partsA.length - partsB.length);
}
