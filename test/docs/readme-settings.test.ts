// The README's "The local relay" section lists every setting npm start hands the relay
// from its environment (CONTRACT §3): each wrangler.toml [vars] name is there, by name or
// under a listed `PREFIX_*` family, so a setting added later cannot go unmentioned.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM helper shared with `npm start`
import { settingNames } from "../../scripts/relay-process.mjs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.split("## The local relay")[1]?.split("\n## ")[0] ?? "";

describe("README: the local relay's settings", () => {
  it("names every setting npm start passes through", () => {
    const families = [...section.matchAll(/`([A-Z][A-Z0-9_]*_)\*`/g)].map((match) => match[1]);
    const names = (settingNames() as string[]).filter((name) => name !== "RELAY_ENV");
    expect(names.length).toBeGreaterThan(40);
    const missing = names.filter((name) => !section.includes(`\`${name}\``) && !families.some((family) => name.startsWith(family)));
    expect(missing).toEqual([]);
  });
});
