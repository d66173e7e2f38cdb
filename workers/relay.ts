/**
 * The Worker entry: HTTP through one of two Hono apps chosen by host — an app origin
 * (`<slug>.<APPS_DOMAIN>`) or a bound custom domain gets the app-serving app, everything else the API app — the
 * effects queue consumer, and the cron sweeps. Wiring only; behaviour lives in src/ and
 * durable-objects/. In development mode each handler's bindings are held to Cloudflare's
 * SQL limits (src/db/production-limits.ts).
 */
import { buildApp } from "../src/http/app";
import { buildServeApp } from "../src/http/serve/app";
import { servedSlug } from "../src/http/serve/host";
import { routeCustomHost } from "../src/http/serve/custom-host";
import { runSweeps } from "../src/sweeps";
import { consumeEffects } from "../src/effects/consumer";
import { withProductionLimits } from "../src/db/production-limits";

export { AppStore } from "../durable-objects/app-store/app-store";
export { TaskWake } from "../durable-objects/task-wake/task-wake";

const api = buildApp();
const apps = buildServeApp();

export default {
  async fetch(request: Request, rawEnv: Env, ctx: ExecutionContext): Promise<Response> {
    const env = withProductionLimits(rawEnv);
    // The host comes from the URL, never the Host header (the test pool sends none).
    if (servedSlug(request.url, env) !== null) return apps.fetch(request, env, ctx);
    const custom = await routeCustomHost(request, env, ctx);
    if (custom?.kind === "redirect") return custom.response;
    return custom ? apps.fetch(custom.request, env, ctx) : api.fetch(request, env, ctx);
  },

  async queue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
    await consumeEffects(batch, withProductionLimits(env));
  },

  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    ctx.waitUntil(runSweeps(withProductionLimits(env), controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
