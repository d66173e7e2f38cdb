// BoundedMap (src/bounded-map.ts): at most `max` entries, the least recently used going
// first; a read makes an entry the most recent, and a stored null or false is a value.
import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../src/bounded-map";

describe("BoundedMap", () => {
  it("keeps at most max entries, dropping the least recently used", () => {
    const map = new BoundedMap<string, number>(3);
    for (const [key, value] of [["a", 1], ["b", 2], ["c", 3]] as const) map.set(key, value);
    expect(map.get("a")).toBe(1); // a is now the most recent; b the least
    map.set("d", 4);
    expect(map.size).toBe(3);
    expect(map.has("b")).toBe(false);
    expect([map.get("a"), map.get("c"), map.get("d")]).toEqual([1, 3, 4]);
  });

  it("setting a key again replaces it without dropping another, and null is a value", () => {
    const map = new BoundedMap<string, number | null>(2);
    map.set("a", null);
    map.set("b", 2);
    map.set("a", 1);
    expect(map.size).toBe(2);
    expect(map.get("b")).toBe(2);
    map.set("z", null);
    expect(map.has("a")).toBe(false);
    expect(map.has("z")).toBe(true);
    expect(map.get("z")).toBeNull();
    expect(map.delete("z")).toBe(true);
    map.clear();
    expect(map.size).toBe(0);
  });
});
