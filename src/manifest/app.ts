/**
 * The `app` block: the name, description and icon a human sees for the app, plus the two
 * indexing hints. Its own file because the icon rule (exactly one emoji) needs grapheme
 * segmentation, which nothing else in the grammar does.
 */
import { at, expectBoolean, expectObject, expectString, fail, onlyKeys, ROOT } from "./read";
import { utf8Bytes } from "../bytes";
import type { AppIdentity } from "./types";

const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;
const FORBIDDEN_IN_ICON = /[\p{L}\p{N}\p{Cc}\s]/u;

function checkIcon(value: unknown, path: string): string {
  const icon = expectString(value, path, "manifest_invalid");
  if (utf8Bytes(icon) > 64) fail("manifest_invalid", path, "must be at most 64 bytes");
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(icon)];
  if (graphemes.length !== 1) fail("manifest_invalid", path, "must be exactly one emoji");
  // Keycap sequences (1️⃣) carry a digit but are emoji; everything else with a letter,
  // digit, control character or space is not an icon.
  const keycap = /^[0-9#*]\uFE0F?\u20E3$/u.test(icon);
  if (!keycap && (!PICTOGRAPHIC.test(icon) || FORBIDDEN_IN_ICON.test(icon))) {
    fail("manifest_invalid", path, "must be exactly one pictographic emoji, not a letter, digit or symbol");
  }
  return icon;
}

export function compileApp(value: unknown): AppIdentity {
  const path = at(ROOT, "app");
  if (value === undefined) fail("manifest_invalid", path, "is required: { name, description?, icon? }");
  const app = expectObject(value, path, "manifest_invalid");
  onlyKeys(app, ["name", "description", "icon", "indexable", "ogImage"], path, "manifest_invalid");
  const name = expectString(app.name, at(path, "name"), "manifest_invalid", { nonBlank: true, max: 80, singleLine: true });
  const description = app.description === undefined ? null : expectString(app.description, at(path, "description"), "manifest_invalid", { max: 280 });
  const icon = app.icon === undefined ? null : checkIcon(app.icon, at(path, "icon"));
  const indexable = app.indexable === undefined ? false : expectBoolean(app.indexable, at(path, "indexable"), "manifest_invalid");
  let ogImage: string | null = null;
  if (app.ogImage !== undefined) {
    const oPath = at(path, "ogImage");
    ogImage = expectString(app.ogImage, oPath, "manifest_invalid", { max: 2048 });
    let url: URL | null = null;
    try {
      url = new URL(ogImage);
    } catch {
      url = null;
    }
    if (!url || url.protocol !== "https:" || url.username || url.password) fail("manifest_invalid", oPath, "must be an https url");
  }
  return { name, description, icon, indexable, ogImage };
}
