// compareVersions: the ordering behind the 426 gate.
import { describe, expect, it } from "vitest";
import { compareVersions } from "../../src/http/middleware/cli-version";

const sign = (n: number) => Math.sign(n);

describe("compareVersions", () => {
  it("orders by major, minor, patch numerically", () => {
    expect(compareVersions("0.1.0", "0.1.0")).toBe(0);
    expect(sign(compareVersions("0.0.1", "0.1.0"))).toBe(-1);
    expect(sign(compareVersions("0.1.0", "0.0.1"))).toBe(1);
    expect(sign(compareVersions("1.0.0", "0.99.99"))).toBe(1);
    expect(sign(compareVersions("0.10.0", "0.9.0"))).toBe(1);
    expect(sign(compareVersions("1.2.10", "1.2.9"))).toBe(1);
    expect(sign(compareVersions("2.0.0", "10.0.0"))).toBe(-1);
  });

  it("accepts a leading v and surrounding whitespace", () => {
    expect(compareVersions("v1.2.3", "1.2.3")).toBe(0);
    expect(compareVersions(" 1.2.3 ", "v1.2.3")).toBe(0);
  });

  it("ignores pre-release and build suffixes", () => {
    expect(compareVersions("0.1.0-beta.1", "0.1.0")).toBe(0);
    expect(compareVersions("0.1.0+sha.abc", "0.1.0")).toBe(0);
  });

  it("sorts unparseable versions lowest", () => {
    expect(sign(compareVersions("banana", "0.0.0"))).toBe(-1);
    expect(sign(compareVersions("0.0.0", "banana"))).toBe(1);
    expect(compareVersions("banana", "apple")).toBe(0);
    expect(sign(compareVersions("", "0.1.0"))).toBe(-1);
    expect(sign(compareVersions("1.2", "0.1.0"))).toBe(-1);
  });

  it("is antisymmetric", () => {
    const versions = ["0.0.1", "0.1.0", "0.1.1", "1.0.0", "v2.3.4", "x"];
    for (const a of versions) for (const b of versions) expect(sign(compareVersions(a, b))).toBe(-sign(compareVersions(b, a)) || 0);
  });
});
