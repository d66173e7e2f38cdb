/**
 * A real picture of an app's page, taken through the platform's Browser Rendering binding
 * (`BROWSER`, optional: the operator adds `[browser] binding = "BROWSER"` to the Worker's
 * configuration). The screenshot route (src/apps/screenshot.ts) asks for one and falls
 * back to the brand card when there is no binding or this fails. The browser is driven by
 * our own small DevTools client (src/apps/devtools-session.ts), not a browser library.
 */
import { decodeBase64 } from "../http/v1/attachments-body";
import { DevtoolsSession } from "./devtools-session";

/** How long one rendering may take, browser start included, before the card is used instead. */
export const RENDER_TIMEOUT_MS = 25_000;
/**
 * Added to the browser's user agent so the app's analytics do not count the rendering as
 * a visit (src/http/serve/document.ts). Anyone may send it; all it does is not count them.
 */
export const SCREENSHOT_AGENT_MARK = "RelayScreenshot/1";
/** How long the page may take to report `service.ready` once loaded. */
const READY_TIMEOUT_MS = 10_000;

/**
 * Run in the page: answers true once `service.ready` resolves, false after READY_TIMEOUT_MS.
 * A private app's first document is the gate shell, which writes the real page over itself
 * (same window) once the preview token is checked, so `window.service` may appear late.
 */
const WAIT_FOR_READY = `new Promise((done) => {
  const giveUp = setTimeout(() => done(false), ${READY_TIMEOUT_MS});
  const look = () => window.service && window.service.ready
    ? window.service.ready.then(() => { clearTimeout(giveUp); done(true); })
    : setTimeout(look, 50);
  look();
})`;

/** The optional binding; absent from the generated Env because production does not declare it by default. */
export function browserBinding(env: Env): Fetcher | undefined {
  return (env as Env & { BROWSER?: Fetcher }).BROWSER;
}

/** A viewport's PNG is far below this; a bigger answer is not a picture we want. */
const SCREENSHOT_BYTES_LIMIT = 32 * 1024 * 1024;

/**
 * Opens `url` in a fresh browser with that viewport, waits for the page script's `service.ready`,
 * and answers the viewport as PNG bytes. Throws when the page does not get ready or the
 * whole rendering takes longer than RENDER_TIMEOUT_MS.
 */
export async function renderPage(binding: Fetcher, url: string, viewport: { width: number; height: number }): Promise<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let finished = false;
  let browser: DevtoolsSession | undefined;
  const closeBrowser = () => browser?.close();
  const work = (async () => {
    browser = await DevtoolsSession.open(binding);
    if (finished) throw new Error("rendering abandoned");
    return await pictureOf(browser, url, viewport);
  })();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rendering took longer than ${RENDER_TIMEOUT_MS} ms`)), RENDER_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    finished = true;
    clearTimeout(timer);
    // A browser acquired after the deadline: the work sees `finished`, fails, and this closes it.
    work.catch(() => undefined).finally(closeBrowser);
    await closeBrowser();
  }
}

/** In a new tab of `browser`: the marked user agent and the viewport, then the page, its readiness and a PNG. */
async function pictureOf(browser: DevtoolsSession, url: string, viewport: { width: number; height: number }): Promise<Uint8Array> {
  const { userAgent } = await browser.send("Browser.getVersion");
  const { targetId } = await browser.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await browser.send("Target.attachToTarget", { targetId, flatten: true });
  const tab = String(sessionId);
  await browser.send("Page.enable", {}, tab);
  await browser.send("Page.setLifecycleEventsEnabled", { enabled: true }, tab);
  await browser.send("Emulation.setUserAgentOverride", { userAgent: `${userAgent} ${SCREENSHOT_AGENT_MARK}` }, tab);
  await browser.send("Emulation.setDeviceMetricsOverride", { ...viewport, deviceScaleFactor: 1, mobile: false }, tab);

  // The tab's main frame has the tab's id; its `load` under any loader but about:blank's is the page's.
  const { frameTree } = (await browser.send("Page.getFrameTree", {}, tab)) as { frameTree: { frame: { loaderId: string } } };
  const blankLoader = frameTree.frame.loaderId;
  const loaded = browser.nextEvent("Page.lifecycleEvent", tab, (event) => event.name === "load" && event.frameId === targetId && event.loaderId !== blankLoader);
  loaded.catch(() => undefined); // awaited below; if navigating fails first, its later rejection is not unhandled
  const navigation = await browser.send("Page.navigate", { url }, tab);
  if (typeof navigation.errorText === "string" && navigation.errorText !== "") throw new Error(`the page did not load: ${navigation.errorText}`);
  await loaded;

  const evaluation = await browser.send("Runtime.evaluate", { expression: WAIT_FOR_READY, awaitPromise: true, returnByValue: true }, tab);
  const ready = (evaluation.result as { value?: unknown } | undefined)?.value;
  if (ready !== true) throw new Error("the page did not report service.ready in time");
  const { data } = await browser.send("Page.captureScreenshot", { format: "png" }, tab);
  return decodeBase64(String(data), SCREENSHOT_BYTES_LIMIT);
}
