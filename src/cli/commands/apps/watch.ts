// `service apps watch <app> [--since <cursor>] [--collection <a,b>] [--timeout <secs>]
// [--once]`: streams the app's change feed as JSON lines, one FeedEntry per line, plus
// {"type":"resync"}, {"type":"_dormant"} and {"type":"_suspended"} lines (WIRE §3.3,
// §6.7). It tries the app feed socket first and falls back for good to long-polling the
// API (src/cli/feed-watch.ts). Exit 0 on --once after the first entry, on _dormant or
// _suspended, on a clean socket close and on Ctrl-C; exit 1 with ws_timeout when --timeout
// runs out first.
import { boolFlag, stringFlag } from "../../argv.ts";
import { CliError, invalidArgs } from "../../errors.ts";
import { watchFeed } from "../../feed-watch.ts";
import { announcedVersion } from "../../version.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

export const appsWatch: Command = {
  noun: "apps",
  verb: "watch",
  summary: "stream the app's change feed as JSON lines (socket, else long-poll)",
  description: [
    "Prints each change as one compact JSON line: { seq, op, collection_name, row_key, row_version, data,",
    "author, ts }. Also {\"type\":\"resync\"} when the feed lost history (re-list your collections and keep",
    "reading), {\"type\":\"_dormant\"} or {\"type\":\"_suspended\"} just before exiting 0.",
    "--since 0 (the default) starts from the beginning of the kept feed; pass the last seq you saw to",
    "resume. It first tries the app's feed socket (<app url>/_svc/ws); when that cannot be opened it",
    "long-polls GET /v1/apps/:id/feed (25 s holds, with collection=a,b for --collection) for the rest",
    "of the run. Ctrl-C exits 0.",
  ].join("\n"),
  flags: [
    { name: "since", kind: "string", value: "<cursor>", description: "start after this feed seq (default 0: from the beginning)" },
    { name: "collection", kind: "string", value: "<a,b>", description: "only entries of these collections (comma list; each must be declared)" },
    { name: "timeout", kind: "string", value: "<secs>", description: "give up with ws_timeout (exit 1) if nothing ends the watch in time" },
    { name: "once", kind: "boolean", description: "exit 0 after printing the first entry" },
  ],
  args: [APP_ARG],
  examples: ["service apps watch my-app", "service apps watch my-app --since 42 --collection notes,tasks", "service apps watch my-app --once --timeout 60"],
  skillCheck: false,
  async run(ctx) {
    const sinceRaw = stringFlag(ctx.flags, "since");
    if (sinceRaw !== undefined && !/^(0|[1-9][0-9]*)$/.test(sinceRaw)) {
      throw invalidArgs(`--since must be a feed seq (a whole number, 0 or more); got ${JSON.stringify(sinceRaw)}.`, ctx.command, { flag: "--since" });
    }
    const since = sinceRaw === undefined ? 0 : Number(sinceRaw);
    if (!Number.isSafeInteger(since)) throw invalidArgs("--since is too large.", ctx.command, { flag: "--since" });

    const collectionRaw = stringFlag(ctx.flags, "collection");
    let collections: Set<string> | null = null;
    if (collectionRaw !== undefined) {
      const names = collectionRaw.split(",").map((s) => s.trim()).filter(Boolean);
      if (names.length === 0) throw invalidArgs("--collection needs at least one collection name (comma list).", ctx.command, { flag: "--collection" });
      collections = new Set(names);
    }

    const timeoutRaw = stringFlag(ctx.flags, "timeout");
    let timeoutMs: number | null = null;
    if (timeoutRaw !== undefined) {
      const seconds = Number(timeoutRaw);
      if (!/^[0-9]+(\.[0-9]+)?$/.test(timeoutRaw) || !(seconds > 0)) {
        throw invalidArgs(`--timeout must be a positive number of seconds; got ${JSON.stringify(timeoutRaw)}.`, ctx.command, { flag: "--timeout" });
      }
      timeoutMs = seconds * 1000;
    }

    const t = await target(ctx, ctx.args[0]);
    const detail = t.app.detail ?? (await t.relay.object("GET", t.path, { auth: t.auth }));
    const appUrl = typeof detail.url === "string" && detail.url ? detail.url : null;
    // An undeclared name would never match: refuse it the way the relay's feed does, whichever way the watch runs.
    const declared = declaredCollections(detail.manifest);
    const unknown = collections && declared ? [...collections].find((name) => !declared.has(name)) : undefined;
    if (unknown !== undefined) {
      throw new CliError("collection_not_found", `The app declares no collection "${unknown}".`, {
        hint: "Check --collection against the collections of the app's manifest.", details: { collection: unknown },
      });
    }

    const interrupted = new AbortController();
    const onSigint = () => interrupted.abort();
    process.once("SIGINT", onSigint);
    try {
      return await watchFeed({
        apiBase: t.relay.baseUrl,
        appId: t.app.id,
        appUrl,
        apiKey: t.key,
        cliVersion: announcedVersion(ctx.env),
        since,
        collections,
        once: boolFlag(ctx.flags, "once"),
        timeoutMs,
        emit: (line) => ctx.out.text(JSON.stringify(line)),
        warn: (text) => ctx.out.warn(text),
        signal: interrupted.signal,
      });
    } finally {
      process.removeListener("SIGINT", onSigint);
    }
  },
};

/** The collection names a manifest declares, or null when the detail carries none to check against. */
function declaredCollections(manifest: unknown): Set<string> | null {
  const ext = typeof manifest === "object" && manifest !== null ? (manifest as Record<string, unknown>)["x-service-manifest"] : undefined;
  const collections = typeof ext === "object" && ext !== null ? (ext as Record<string, unknown>).collections : undefined;
  return typeof collections === "object" && collections !== null && !Array.isArray(collections) ? new Set(Object.keys(collections)) : null;
}
