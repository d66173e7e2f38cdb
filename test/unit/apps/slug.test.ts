// App slugs (spec A App: unique, immutable, unguessable for link apps; caller-chosen for
// private and public): the validation rule, the reserved names, and the two generators.
import { describe, expect, it } from "vitest";
import { RelayError } from "../../../src/errors";
import { RESERVED_SLUGS, friendlySlug, unguessableSlug, validateSlug } from "../../../src/apps/slug";

function refusal(slug: string): RelayError {
  try {
    validateSlug(slug);
  } catch (err) {
    if (err instanceof RelayError) return err;
    throw err;
  }
  throw new Error(`"${slug}" was accepted`);
}

describe("validateSlug", () => {
  it.each(["abc", "my-app", "a1b2c3", "123", "x-y-z", "a".repeat(63), `a${"-b".repeat(31)}`])("accepts %s", (slug) => {
    expect(() => validateSlug(slug)).not.toThrow();
  });

  it.each([
    ["too short", "ab"], ["one character", "a"], ["empty", ""], ["64 characters", "a".repeat(64)],
    ["uppercase", "MyApp"], ["underscore", "my_app"], ["dot", "my.app"], ["space", "my app"], ["slash", "a/b"],
    ["leading hyphen", "-abc"], ["trailing hyphen", "abc-"], ["double hyphen", "ab--cd"], ["punycode", "xn--80ak6aa92e"],
    ["non-ASCII", "café"], ["trailing newline", "abc\n"], ["percent", "ab%63"],
  ])("refuses %s with invalid_request naming slug", (_name, slug) => {
    const e = refusal(slug);
    expect(e.code).toBe("invalid_request");
    expect(e.details).toEqual({ field: "slug" });
  });

  it("refuses every reserved name, and the list covers the relay's own hosts", () => {
    for (const name of ["www", "api", "admin", "console", "auth", "login", "mail", "static", "cdn", "docs", "status", "relay", "service", "svc", "localhost", "device", "authorize", "oauth"]) {
      expect(RESERVED_SLUGS.has(name)).toBe(true);
    }
    for (const name of RESERVED_SLUGS) {
      if (name.length < 3) continue;
      const e = refusal(name);
      expect(e.code).toBe("invalid_request");
      expect(e.message).toMatch(/reserved/);
    }
  });
});

describe("unguessableSlug (link apps)", () => {
  it("is 24 lowercase base36 characters starting with a letter, valid, and never repeats", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const slug = unguessableSlug();
      expect(slug).toMatch(/^[a-z][a-z0-9]{23}$/);
      expect(() => validateSlug(slug)).not.toThrow();
      seen.add(slug);
    }
    expect(seen.size).toBe(2000);
  });

  it("uses the whole alphabet (no constant stretch an attacker could skip)", () => {
    const chars = new Set<string>();
    for (let i = 0; i < 200; i++) for (const ch of unguessableSlug().slice(1)) chars.add(ch);
    expect(chars.size).toBe(36);
  });
});

describe("friendlySlug (private and public apps without a chosen slug)", () => {
  it.each([
    ["Notes", /^notes-[a-z0-9]{6}$/],
    ["My Grocery List!", /^my-grocery-list-[a-z0-9]{6}$/],
    ["Café Menu", /^cafe-menu-[a-z0-9]{6}$/],
    ["  --Weird__Name--  ", /^weird-name-[a-z0-9]{6}$/],
    ["日本語", /^app-[a-z0-9]{6}$/],
    ["X", /^app-[a-z0-9]{6}$/],
    ["admin", /^app-[a-z0-9]{6}$/],
    [null, /^app-[a-z0-9]{6}$/],
    [undefined, /^app-[a-z0-9]{6}$/],
    ["A very long application name that goes on and on and on forever", /^a-very-long-application-name-that-goes-o-[a-z0-9]{6}$|^a-very-long-application-name-that-goes-on-[a-z0-9]{6}$/],
  ])("%s → %s", (name, pattern) => {
    const slug = friendlySlug(name as string | null | undefined);
    expect(slug).toMatch(pattern);
    expect(() => validateSlug(slug)).not.toThrow();
  });

  it("is always a valid slug of at most 63 characters, even when the stem is cut at a hyphen", () => {
    for (const name of ["a-".repeat(50), `${"x".repeat(39)}-y`, "-".repeat(80), "1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2"]) {
      const slug = friendlySlug(name);
      expect(slug.length).toBeLessThanOrEqual(63);
      expect(() => validateSlug(slug)).not.toThrow();
    }
  });
});
