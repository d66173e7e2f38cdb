/**
 * The bot challenge for anonymous writes (WIRE §4.4, spec B rule 11). When the boot config
 * names `antiAbuse` collections, an anonymous viewer's create or upsert on one of them first
 * gets a Turnstile token, which store.ts sends as `x-service-challenge`; the relay checks it
 * with Turnstile. Tokens are single-use, so every write gets its own: the one widget is
 * reset and executed again for each.
 *
 * Nothing is loaded before the first write that needs a token. Then Turnstile's script
 * comes in (explicit rendering), and one widget is rendered into a container of our own,
 * fixed in the page's bottom corner, executed on demand and shown only if Turnstile needs
 * the visitor to interact (`appearance: "interaction-only"`; an invisible site key never
 * shows anything). When the script does not load within 10 s, or the widget reports an
 * error or no token comes, the write is sent without one: the relay then refuses it with
 * `turnstile_required`, which the page sees as the rejection's code. A script that failed
 * to load is tried again only after a minute, so writes meanwhile do not each wait for it.
 */
import type { ChallengeConfig } from "./types";

/** The part of Turnstile's browser API the page script uses. */
interface TurnstileApi {
  render(container: HTMLElement, params: Record<string, unknown>): string | null | undefined;
  execute(container: HTMLElement, params?: Record<string, unknown>): void;
  reset(widget: string): void;
  remove?(widget: string): void;
}

const LOAD_TIMEOUT_MS = 10_000;
/** How long a token may take while Turnstile asks nothing of the visitor. */
const TOKEN_TIMEOUT_MS = 15_000;
/** A script that failed to load is not asked for again before this. */
const RELOAD_AFTER_MS = 60_000;

function present(): TurnstileApi | null {
  const api = (window as unknown as { turnstile?: Partial<TurnstileApi> }).turnstile;
  if (!api || typeof api.render !== "function" || typeof api.execute !== "function" || typeof api.reset !== "function") return null;
  return api as TurnstileApi;
}

export class Challenge {
  private loading: Promise<TurnstileApi | null> | null = null;
  private failedAt = Number.NEGATIVE_INFINITY;
  private box: HTMLElement | null = null;
  private widget: string | null = null;
  /** Settles the token request in flight; the widget's callbacks call it. */
  private settle: ((token: string | null) => void) | null = null;
  private timer = 0;
  /** Token requests run one at a time: there is one widget. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: ChallengeConfig) {}

  /** Whether anonymous creates and upserts on this collection need a token. */
  guards(collection: string): boolean {
    return this.config.collections.includes(collection);
  }

  /** A fresh token, or null when none could be had. Never rejects. */
  token(): Promise<string | null> {
    const next = this.queue.then(() => this.obtain()).catch((err: unknown) => {
      console.warn("service: the bot challenge failed; writing without a token.", err);
      return null;
    });
    this.queue = next;
    return next;
  }

  private load(): Promise<TurnstileApi | null> {
    const api = present();
    if (api) return Promise.resolve(api);
    if (this.loading) return this.loading;
    if (Date.now() - this.failedAt < RELOAD_AFTER_MS) return Promise.resolve(null);
    let src: string;
    try {
      const url = new URL(this.config.script, window.location.href);
      url.searchParams.set("render", "explicit");
      src = url.href;
    } catch {
      return Promise.resolve(null);
    }
    this.loading = new Promise<TurnstileApi | null>((resolve) => {
      const script = document.createElement("script");
      script.src = src;
      script.async = true;
      const finish = (loaded: TurnstileApi | null, failed: boolean) => {
        window.clearTimeout(timer);
        script.onload = null;
        script.onerror = null;
        this.loading = null;
        if (!loaded) {
          this.failedAt = Date.now();
          // An error leaves nothing behind; a late script may still arrive and be used next time.
          if (failed) script.remove();
          console.warn("service: the bot challenge could not be loaded; writing without a token.");
        }
        resolve(loaded);
      };
      const timer = window.setTimeout(() => finish(present(), false), LOAD_TIMEOUT_MS);
      script.onload = () => finish(present(), true);
      script.onerror = () => finish(null, true);
      (document.head ?? document.documentElement).appendChild(script);
    });
    return this.loading;
  }

  /** Our own container, at the bottom corner and out of the page's flow; made again if the page removed it. */
  private container(api: TurnstileApi): HTMLElement {
    if (this.box?.isConnected) return this.box;
    if (this.widget !== null) {
      try {
        api.remove?.(this.widget);
      } catch {
        // already gone with its container
      }
      this.widget = null;
    }
    const box = document.createElement("div");
    box.setAttribute("data-service-challenge", "");
    box.style.cssText = "position:fixed;right:12px;bottom:12px;z-index:2147483647;max-width:calc(100vw - 24px)";
    (document.body ?? document.documentElement).appendChild(box);
    this.box = box;
    return box;
  }

  private async obtain(): Promise<string | null> {
    const api = await this.load();
    if (!api) return null;
    return new Promise<string | null>((resolve) => {
      const done = (token: string | null) => {
        if (this.settle !== done) return;
        this.settle = null;
        window.clearTimeout(this.timer);
        resolve(token);
      };
      this.settle = done;
      this.timer = window.setTimeout(() => done(null), TOKEN_TIMEOUT_MS);
      try {
        const box = this.container(api);
        if (this.widget === null) {
          this.widget = api.render(box, {
            sitekey: this.config.siteKey,
            execution: "execute",
            appearance: "interaction-only",
            retry: "never",
            "refresh-expired": "manual",
            "refresh-timeout": "manual",
            "response-field": false,
            callback: (token: unknown) => this.settle?.(typeof token === "string" && token !== "" ? token : null),
            "error-callback": () => {
              this.settle?.(null);
              return true;
            },
            "timeout-callback": () => this.settle?.(null),
            // The visitor has to tick a box: wait for them (Turnstile's own timeout-callback ends the wait).
            "before-interactive-callback": () => window.clearTimeout(this.timer),
          }) ?? null;
          if (this.widget === null) {
            done(null);
            return;
          }
        } else {
          // The last token was spent on the last write: start over for a new one.
          api.reset(this.widget);
        }
        api.execute(box);
      } catch (err) {
        console.warn("service: the bot challenge failed; writing without a token.", err);
        done(null);
      }
    });
  }
}
