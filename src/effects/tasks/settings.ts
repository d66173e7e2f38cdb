/**
 * The agent task queue's settings, read once from `config(env)` so every part of the
 * engine (recording, claiming, finishing, the sweep) uses the same numbers.
 */
import { config } from "../../config";

export interface TaskSettings {
  leaseSeconds: number;
  maxLeaseSeconds: number;
  maxAttempts: number;
  hourlyCap: number;
  ttlSeconds: number;
  retentionDays: number;
  retryBaseMs: number;
  apiBase: string;
}

export function taskSettings(env: object): TaskSettings {
  const cfg = config(env);
  const limits = cfg.limits;
  return {
    leaseSeconds: Math.max(1, limits.AGENT_TASKS_LEASE_SECONDS),
    maxLeaseSeconds: Math.max(1, limits.AGENT_TASKS_MAX_LEASE_SECONDS),
    maxAttempts: Math.max(1, limits.AGENT_TASKS_MAX_ATTEMPTS),
    hourlyCap: limits.AGENT_TASKS_APP_HOURLY_CAP,
    ttlSeconds: Math.max(1, limits.AGENT_TASKS_TTL_SECONDS),
    retentionDays: limits.AGENT_TASKS_RETENTION_DAYS,
    retryBaseMs: cfg.agentTaskRetryBaseMs,
    apiBase: cfg.apiOrigin,
  };
}

/** The longest wait between attempts after a nack, however many attempts came before. */
const MAX_RETRY_DELAY_MS = 60 * 60_000;

/** How long a task nacked on its `attempts`-th claim waits before it may be claimed again. */
export function retryDelayMs(settings: TaskSettings, attempts: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, settings.retryBaseMs * 2 ** Math.max(0, attempts - 1));
}
