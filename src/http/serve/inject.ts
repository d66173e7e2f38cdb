/**
 * What the relay adds to the author's document as it is served, with HTMLRewriter:
 * first in <head>, the inline bootstrap that defines `window.service` synchronously and
 * the deferred `<script src="/_svc/sdk.<hash>.js">`, then the head identity the author
 * left out. A first pass only looks (is there a <head>, a <title>, a description...),
 * the second writes, so identity is added exactly when missing and a document without
 * <head> or <html> still gets the bootstrap first. For gated apps the second pass also
 * gives same-origin asset URLs (src/href/poster of img, audio, video, source, track,
 * link, a) a short-lived `svc_pass`, because those requests cannot carry a header.
 */
import { config } from "../../config";
import { BOOTSTRAP_SOURCE, SDK_HASH } from "../../page-script/bundle.generated";
import type { AssetEntry } from "../../db/apps";
import type { ServedApp, ServedPolicy } from "./context";
import { emptyFacts, identityHtml, type HeadFacts } from "./identity";
import { jsonAttribute } from "./html";
import { mintAssetPass } from "../../auth/asset-pass";

export const ASSET_PASS_PARAM = "svc_pass";

export function sdkPath(): string {
  return `/_svc/sdk.${SDK_HASH}.js`;
}

/**
 * The page script's boot config (`data-svc`, the shape of BootConfig in
 * src/page-script/types.ts). `challenge` is there only for an app whose pages run the bot
 * challenge: the Turnstile site key, the script URL and the `antiAbuse` collections.
 */
export function bootConfig(served: ServedApp, policy: ServedPolicy, apiOrigin: string) {
  return {
    slug: served.slug,
    name: policy.app.name,
    description: policy.app.description,
    icon: policy.app.icon,
    visibility: served.app.visibility,
    authorize: `${apiOrigin}/authorize`,
    ...(policy.challenge ? { challenge: policy.challenge } : {}),
  };
}

export function bootHtml(served: ServedApp, policy: ServedPolicy, apiOrigin: string): string {
  return `<script data-svc="${jsonAttribute(bootConfig(served, policy, apiOrigin))}">${BOOTSTRAP_SOURCE}</script>`
    + `<script src="${sdkPath()}" defer></script>`;
}

function htmlResponse(text: string): Response {
  return new Response(text, { headers: { "content-type": "text/html; charset=utf-8" } });
}

/** Pass one: what the author already put in the document. */
export async function scanHead(text: string): Promise<HeadFacts> {
  const facts = emptyFacts();
  let titles = 0;
  let svgTitles = 0;
  const rewriter = new HTMLRewriter()
    .on("html", { element: () => { facts.html = true; } })
    .on("head", { element: () => { facts.head = true; } })
    .on("title", { element: () => { titles += 1; } })
    .on("svg title", { element: () => { svgTitles += 1; } })
    .on("meta", {
      element: (el) => {
        const name = (el.getAttribute("name") ?? "").trim().toLowerCase();
        const property = (el.getAttribute("property") ?? "").trim().toLowerCase();
        if (name === "description") facts.description = true;
        if (name === "robots") facts.robots = true;
        for (const key of [name, property]) {
          if (key.startsWith("og:") || key.startsWith("twitter:")) facts.social.add(key);
        }
      },
    })
    .on("link", {
      element: (el) => {
        const rel = (el.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
        if (rel.includes("icon")) facts.icon = true;
      },
    });
  await rewriter.transform(htmlResponse(text)).arrayBuffer();
  facts.title = titles > svgTitles;
  return facts;
}

export interface PassContext {
  keys: { assets: CryptoKey };
  appId: string;
  shareHash: string | null;
  assets: AssetEntry[];
  documentUrl: string;
}

const ASSET_ATTRIBUTES: Array<[selector: string, attribute: string]> = [
  ["img", "src"], ["audio", "src"], ["video", "src"], ["video", "poster"], ["source", "src"],
  ["track", "src"], ["link", "href"], ["a", "href"], ["input", "src"],
];

/** Adds `svc_pass` to an attribute value that names one of the live version's assets. */
async function withPass(value: string, ctx: PassContext, byPath: Map<string, AssetEntry>): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(value.trim(), ctx.documentUrl);
  } catch {
    return null;
  }
  if (url.origin !== new URL(ctx.documentUrl).origin) return null;
  const path = url.pathname.slice(1);
  if (!byPath.has(path)) return null;
  url.searchParams.set(ASSET_PASS_PARAM, await mintAssetPass(ctx.keys, ctx.appId, ctx.shareHash, path));
  return url.pathname + url.search + url.hash;
}

/** Pass two: the served document, streaming. */
export function injectDocument(text: string, served: ServedApp, policy: ServedPolicy, env: object, facts: HeadFacts, passes: PassContext | null): Response {
  const head = bootHtml(served, policy, config(env).apiOrigin) + identityHtml(facts, served, policy);
  let placed = false;
  const rewriter = new HTMLRewriter();
  if (facts.head) {
    rewriter.on("head", { element: (el) => { if (!placed) { el.prepend(head, { html: true }); placed = true; } } });
  } else if (facts.html) {
    rewriter.on("html", { element: (el) => { if (!placed) { el.prepend(`<head>${head}</head>`, { html: true }); placed = true; } } });
  } else {
    rewriter.on("*", { element: (el) => { if (!placed) { el.before(`<head>${head}</head>`, { html: true }); placed = true; } } });
  }
  rewriter.onDocument({ end: (end) => { if (!placed) { end.append(`<head>${head}</head>`, { html: true }); placed = true; } } });

  if (passes) {
    const byPath = new Map(passes.assets.map((a) => [a.path, a]));
    for (const [selector, attribute] of ASSET_ATTRIBUTES) {
      rewriter.on(`${selector}[${attribute}]`, {
        element: async (el) => {
          const value = el.getAttribute(attribute);
          if (value === null) return;
          const rewritten = await withPass(value, passes, byPath);
          if (rewritten !== null) el.setAttribute(attribute, rewritten);
        },
      });
    }
  }
  return rewriter.transform(htmlResponse(text));
}
