/**
 * A real picture of an app's page, taken through the platform's Browser Rendering binding
 * (`BROWSER`, optional: the operator adds `[browser] binding = "BROWSER"` to the Worker's
 * configuration). The screenshot route (src/apps/screenshot.ts) asks for one and falls
 * back to the brand card when there is no binding or this fails. The browser client is
 * loaded on first use, so a Worker that never renders does not evaluate it.
 */
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

/**
 * Opens `url` in a fresh browser with that viewport, waits for the page script's `service.ready`,
 * and answers the viewport as PNG bytes. Throws when the page does not get ready or the
 * whole rendering takes longer than RENDER_TIMEOUT_MS.
 */
export async function renderPage(binding: Fetcher, url: string, viewport: { width: number; height: number }): Promise<Uint8Array> {
  const { default: puppeteer } = await import("@cloudflare/puppeteer");
  let timer: ReturnType<typeof setTimeout> | undefined;
  let finished = false;
  let browser: Awaited<ReturnType<typeof puppeteer.launch>> | undefined;
  const closeBrowser = () => browser?.close().catch(() => undefined);
  const work = (async () => {
    browser = await puppeteer.launch(binding);
    if (finished) throw new Error("rendering abandoned");
    const page = await browser.newPage();
    await page.setUserAgent(`${await browser.userAgent()} ${SCREENSHOT_AGENT_MARK}`);
    await page.setViewport(viewport);
    await page.goto(url, { waitUntil: "load", timeout: RENDER_TIMEOUT_MS });
    const ready = await page.evaluate(WAIT_FOR_READY);
    if (ready !== true) throw new Error("the page did not report service.ready in time");
    return new Uint8Array(await page.screenshot({ type: "png" }));
  })();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rendering took longer than ${RENDER_TIMEOUT_MS} ms`)), RENDER_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    finished = true;
    clearTimeout(timer);
    // A browser launched after the deadline: the work sees `finished`, fails, and this closes it.
    work.catch(() => undefined).finally(closeBrowser);
    await closeBrowser();
  }
}
