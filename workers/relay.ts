/**
 * The Worker entry: HTTP through the Hono app, the effects queue consumer, and the cron
 * sweeps. Wiring only; behaviour lives in src/ and durable-objects/.
 */
import { buildApp } from "../src/http/app";
import { sweepExpired } from "../src/sweeps";

export { AppStore } from "../durable-objects/app-store/app-store";

const app = buildApp();

export default {
  fetch: app.fetch,

  async queue(batch: MessageBatch<unknown>, _env: Env, _ctx: ExecutionContext): Promise<void> {
    // No effect producers exist yet; acknowledge so nothing is redelivered forever.
    batch.ackAll();
  },

  async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    ctx.waitUntil(sweepExpired(env));
  },
} satisfies ExportedHandler<Env>;
