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

export function rateLimit(name: keyof Omit<Config["rateLimit"], "windowSeconds">): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const limits = config(c.env).rateLimit;
    await hitRateLimit(c.env, `${name}:${clientIp(c)}`, limits[name], limits.windowSeconds);
    await next();
  };
}
