/**
 * The owner console (placeholder wiring; the pages are built in console/*.tsx).
 */
import type { Hono } from "hono";
import type { AppEnv } from "../types";

export function consoleRoutes(_app: Hono<AppEnv>): void {}
