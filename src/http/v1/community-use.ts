/**
 * Mounts what happens to a community template once it is listed: the config contract and
 * install, template upgrades of an installed app, reviews, and the publisher's analytics.
 */
import type { Hono } from "hono";
import type { AppEnv } from "../types";
import { communityInstallRoutes } from "./community-install";
import { appUpgradeRoutes } from "./app-upgrade";
import { reviewRoutes } from "./reviews";
import { publisherAnalyticsRoutes } from "./publisher-analytics";

export function communityUseRoutes(app: Hono<AppEnv>): void {
  communityInstallRoutes(app);
  appUpgradeRoutes(app);
  reviewRoutes(app);
  publisherAnalyticsRoutes(app);
}
