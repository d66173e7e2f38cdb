/**
 * The router both Hono apps (the API origin's and the app origins') are built with.
 *
 * Hono's default SmartRouter tries its RegExpRouter first and falls back to the
 * TrieRouter when a route shape is one the RegExpRouter cannot hold. Ours always falls
 * back: the wire puts literal segments beside parameters at the same position
 * (`/v1/apps/advisories` and `/v1/apps/:id`, `/v1/agent-tasks/stream` and
 * `/v1/agent-tasks/:taskId`), which the RegExpRouter refuses. The fallback happens on the
 * first request of every isolate, after building and throwing away the RegExpRouter's
 * tables, so it costs a cold start tens of milliseconds for nothing. Choosing the
 * TrieRouter up front routes exactly as before without that detour.
 *
 * Matching a path through the trie is still a walk over every middleware pattern and
 * parameter on the way (about 8 % of an isolate's samples under a stream of creates), and
 * the same paths come back again and again: an app's page creates and lists through the
 * same few URLs. The routes never change once the app is built, so a match depends on the
 * method and path alone; the last MAX_REMEMBERED_MATCHES of them (short enough) are kept and
 * handed out again (Hono only reads a match result).
 */
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { BoundedMap } from "../bounded-map";

export const MAX_REMEMBERED_MATCHES = 1_000;
/** Longer paths are matched every time, so a stream of huge URLs cannot fill the memory. */
const MAX_REMEMBERED_PATH = 512;

export class RememberingRouter<Handler> implements Router<Handler> {
  name = "RememberingRouter";
  private readonly trie = new TrieRouter<Handler>();
  private readonly remembered = new BoundedMap<string, Result<Handler>>(MAX_REMEMBERED_MATCHES);

  add(method: string, path: string, handler: Handler): void {
    this.remembered.clear();
    this.trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<Handler> {
    const key = `${method} ${path}`;
    const hit = this.remembered.get(key);
    if (hit) return hit;
    const result = this.trie.match(method, path);
    if (path.length <= MAX_REMEMBERED_PATH) this.remembered.set(key, result);
    return result;
  }
}

export function relayRouter<Handler>(): Router<Handler> {
  return new RememberingRouter<Handler>();
}
