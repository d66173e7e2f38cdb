// normaliseUserCode: people type the device user code in many ways.
import { describe, expect, it } from "vitest";
import { normaliseUserCode } from "../../src/db/codes";

describe("normaliseUserCode", () => {
  it("accepts the canonical, dashless, lowercase and spaced forms alike", () => {
    for (const typed of ["BCDF-GHJK", "BCDFGHJK", "bcdf-ghjk", "bcdfghjk", "bcdf ghjk", "  BCDF - GHJK  ", "b-c-d-f-g-h-j-k"]) {
      expect(normaliseUserCode(typed), typed).toBe("BCDF-GHJK");
    }
  });

  it("leaves anything that is not eight letters trimmed and upper-cased (so it matches nothing)", () => {
    expect(normaliseUserCode("abc")).toBe("ABC");
    expect(normaliseUserCode("  short  ")).toBe("SHORT");
    expect(normaliseUserCode("ABCDEFGHI")).toBe("ABCDEFGHI");
    expect(normaliseUserCode("")).toBe("");
  });
});
