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
 */
import { TrieRouter } from "hono/router/trie-router";

export function relayRouter<Handler>(): TrieRouter<Handler> {
  return new TrieRouter<Handler>();
}
