/**
 * Route-level per-IP limiter. The client address comes from CF-Connecting-IP, which
 * Cloudflare sets on every request (a client cannot forge it past the edge).
 */
import type { MiddlewareHandler } from "hono";
import { config, type Config } from "../../config";
import { hitRateLimit } from "../../db/rate-limit";
import type { AppContext, AppEnv } from "../types";

export function clientIp(c: AppContext): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

export type LimiterBucket = keyof Omit<Config["rateLimit"], "windowSeconds">;

/** Counts this request in the caller's address bucket; 429 `rate_limited` over the limit. */
export async function hitAddressLimit(c: AppContext, name: LimiterBucket): Promise<void> {
  const limits = config(c.env).rateLimit;
  await hitRateLimit(c.env, `${name}:${clientIp(c)}`, limits[name], limits.windowSeconds);
}

export function rateLimit(name: LimiterBucket): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await hitAddressLimit(c, name);
    await next();
  };
}
