// What the documentation tests share: finding the paths on the API origin a text names,
// and checking that such a path answers 200 to a browser, with the element its #anchor
// names. The guides, the error hints, the skill document and its reference sections all
// point at each other through such paths.
import { expect } from "vitest";
import { call } from "../helpers";

export const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** Paths on the API origin a text names: a `/` at the start of a word, up to the sentence's own punctuation. */
export function originPaths(text: string): string[] {
  return [...text.matchAll(/(?:^|[\s(`])(\/[\w./#-]*[\w/])/g)].map((m) => m[1]);
}

/** GETs `path` as a browser would; asserts 200, and that a #fragment is an element id on the page. */
export async function expectReadable(path: string, from: string): Promise<void> {
  const [pathname, fragment] = path.split("#");
  const res = await call(pathname, { headers: { accept: BROWSER } });
  expect(res.status, `${path} (from ${from})`).toBe(200);
  const body = await res.text();
  if (fragment) expect(body, `#${fragment} on ${pathname} (from ${from})`).toContain(`id="${fragment}"`);
}
