/**
 * What an accepted live delivery does beyond its row (spec A States: "App dormant →
 * an inbound delivery on a hook with wake true"): a hook whose rule says `wake: true`
 * brings a dormant app back to active. A backfill never calls this (spec B: backfill
 * suppresses wake).
 *
 * Seam for agent tasks (src/effects/tasks/, built separately): the row a delivery writes
 * already reaches agentTasks rules through the outbox like any write (a rule may admit
 * hook-authored writes with its machine author kinds). If tasks ever need a nudge beyond
 * that (for example to tell the task-wake socket that a woken app has work), this is the
 * one place a woken app is known; call it from `afterAcceptedDelivery` below.
 */
import { updateApp, type AppRow } from "../../db/apps";
import { nowIso } from "../../auth/tokens";
import type { LiveHook } from "./hooks";

/** Wakes the app when the hook asks for it and the app is dormant; answers the app's status afterwards. */
export async function afterAcceptedDelivery(env: Env, app: AppRow, hook: LiveHook): Promise<AppRow["status"]> {
  if (!hook.rule.wake || app.status !== "dormant") return app.status;
  const woken = await updateApp(env, app.id, { status: "active", lastActivityAt: nowIso() });
  return woken.status;
}
