/**
 * The app's page: `GET /` and `/index.html` answer the live document from R2 with the
 * page script and head identity injected and the manifest's security headers. A public
 * app's document goes to anyone. A private or link app's plain request gets the gate
 * shell instead; the shell's script asks again with the credential in a header, and only
 * then does the document (with asset passes, never cached) come back. A credential that
 * does not open the app answers 401 so the shell can show its gate. Each document served
 * counts a page view (src/apps/analytics.ts), except the screenshot renderer's.
 */
import { errorLogLine } from "../../db/query-errors";
import { RelayError } from "../../errors";
import { getBlob } from "../../blobs/store";
import { ServeRefusal, type ServeContext } from "./context";
import { envelope } from "./errors";
import { injectDocument, scanHead } from "./inject";
import { documentHeaders } from "./policy";
import { recordPageView } from "../../apps/analytics";
import { SCREENSHOT_AGENT_MARK } from "../../apps/page-render";
import { gateShell } from "./shell";
import { SHARE_HEADER, assertGatedServable, canOpen, requireKeys, viewerOf } from "./viewer";

/** Counts the served page in the app's analytics after the response (never delaying or failing it); the relay's own screenshot renderer is not a visit. */
function countView(c: ServeContext): void {
  if (c.req.header("user-agent")?.includes(SCREENSHOT_AGENT_MARK)) return;
  const served = c.get("served");
  const cf = c.req.raw.cf as { country?: unknown } | undefined;
  const view = {
    appId: served.app.id, appOrigin: served.origin, address: c.req.header("cf-connecting-ip") ?? "", userAgent: c.req.header("user-agent") ?? "",
    country: typeof cf?.country === "string" ? cf.country : "", referrer: c.req.header("referer") ?? null,
  };
  c.executionCtx.waitUntil(recordPageView(c.env, view).catch((err) => console.error(`analytics: a view of app ${view.appId} was not counted`, errorLogLine(err))));
}

export async function serveDocument(c: ServeContext): Promise<Response> {
  const served = c.get("served");
  const live = await served.live();
  const gated = served.app.visibility !== "public";
  if (gated) {
    assertGatedServable(served, c.env);
    const presented = c.req.header("authorization") !== undefined || c.req.header(SHARE_HEADER) !== undefined;
    if (!presented) return gateShell(served, live.policy, c.env);
    const viewer = await viewerOf(c, served);
    if (!canOpen(served, viewer)) {
      const res = envelope(c, new RelayError("unauthorized", served.app.visibility === "link"
        ? "This share link is not valid (it may have been rotated), and no app session with access was presented."
        : "This app is private: present an app session of someone with access (sign in through /authorize)."));
      res.headers.set("Cache-Control", "no-store");
      return res;
    }
  }

  const object = await getBlob(c.env.BLOBS, "doc", live.version.documentSha256);
  if (!object) throw new ServeRefusal("unavailable", "This app's page could not be loaded right now. Try again in a moment.");
  const text = await object.text();
  const facts = await scanHead(text);
  const passes = gated
    ? { keys: await requireKeys(c.env), appId: served.app.id, shareHash: served.app.shareTokenHash, assets: live.assets, documentUrl: c.req.url }
    : null;
  const rewritten = injectDocument(text, served, live.policy, c.env, facts, passes);
  const headers: Record<string, string> = {
    ...documentHeaders(served, live.policy),
    "Cache-Control": gated ? "no-store" : "public, max-age=60",
  };
  if (gated) headers.Vary = "Authorization, X-Service-Share";
  countView(c);
  return new Response(rewritten.body, { status: 200, headers });
}
