// safeReturnTo: after sign-in the relay only ever redirects to a path on its own origin.
import { describe, expect, it } from "vitest";
import { safeReturnTo } from "../../src/http/v1/human-auth";

const API = "http://localhost:8787";

describe("safeReturnTo", () => {
  it("keeps paths on the API origin, with query and fragment", () => {
    expect(safeReturnTo("/", API)).toBe("/");
    expect(safeReturnTo("/device?code=BCDF-GHJK", API)).toBe("/device?code=BCDF-GHJK");
    expect(safeReturnTo("/apps/x#top", API)).toBe("/apps/x#top");
    expect(safeReturnTo(`${API}/apps?a=1`, API)).toBe("/apps?a=1");
    expect(safeReturnTo(`${API}`, API)).toBe("/");
  });

  it("answers null for nothing", () => {
    expect(safeReturnTo(undefined, API)).toBeNull();
    expect(safeReturnTo(null, API)).toBeNull();
    expect(safeReturnTo("", API)).toBeNull();
  });

  it("refuses other origins", () => {
    for (const value of [
      "https://evil.example/", "http://localhost:8788/", "https://localhost:8787/", "http://localhost:8787.evil.example/",
      "http://user@evil.example/", "javascript:alert(1)", "data:text/html,<script>x</script>", "https:evil.example",
    ]) expect(safeReturnTo(value, API), value).toBeNull();
  });

  it("refuses protocol-relative and browser-normalised escapes", () => {
    for (const value of [
      "//evil.example", "///evil.example", "/\\evil.example", "\\\\evil.example", "/\t/evil.example", "/\n/evil.example",
      "/.//evil.example", "/./\\evil.example", `${API}//evil.example`, `${API}/.//evil.example`, " //evil.example",
    ]) expect(safeReturnTo(value, API), JSON.stringify(value)).toBeNull();
  });

  it("refuses control characters (they would break the Location header)", () => {
    for (const value of ["/ok\r\nSet-Cookie: a=b", "/ok\u0000", "/ok\u007f", "/a\u001bb"]) expect(safeReturnTo(value, API), JSON.stringify(value)).toBeNull();
  });

  it("refuses relative paths that do not start at the root", () => {
    expect(safeReturnTo("apps", API)).toBeNull();
    expect(safeReturnTo("./apps", API)).toBeNull();
  });

  it("never returns something a browser would resolve off-origin", () => {
    const tricky = ["/%2F/evil.example", "/%5Cevil.example", "/..//evil.example", "/a/../../evil.example", "/apps?next=//evil.example"];
    for (const value of tricky) {
      const out = safeReturnTo(value, API);
      if (out !== null) expect(new URL(out, API).origin, value).toBe(API);
    }
  });
});
