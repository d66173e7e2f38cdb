/**
 * One place that mounts an app's operating surface (issue 13 items 6-9): modes,
 * analytics and usage, screenshot, custom domains, each in its own route module.
 */
import type { Hono } from "hono";
import type { AppEnv } from "../types";
import { appModeRoutes } from "./app-modes";
import { appInsightRoutes } from "./app-insights";
import { appDomainRoutes } from "./app-domains";

export function appOperationRoutes(app: Hono<AppEnv>): void {
  appModeRoutes(app);
  appInsightRoutes(app);
  appDomainRoutes(app);
}
