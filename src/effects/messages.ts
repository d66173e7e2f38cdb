/**
 * The messages on the effects queue. Each names its work and carries nothing else, so
 * none can approach the queue's 128 KB limit however large a row is: an outbox pointer
 * (the AppStore still holds the change it points at), a webhook attempt (the delivery
 * journal in D1 holds the body) or a notification digest that is due (the held
 * notifications in D1 hold the text). Anything else on the queue is malformed.
 */
import type { OutboxPointer } from "../../durable-objects/app-store/contract";

/** The next attempt of one webhook delivery is due. */
export interface WebhookAttemptMessage {
  type: "webhook_attempt";
  delivery_id: string;
}

/** One recipient's held notifications on one channel of one app are due to go (as one digest). */
export interface NotifyDigestMessage {
  type: "notify_digest";
  app_id: string;
  channel: "email" | "push";
  recipient: string;
}

export type EffectMessage = { type: "outbox"; pointer: OutboxPointer } | WebhookAttemptMessage | NotifyDigestMessage;

const KINDS = new Set(["notify", "webhooks", "agentTasks"]);

/** Reads a queue message body; null when it is not one the relay sends. */
export function readEffectMessage(body: unknown): EffectMessage | null {
  if (typeof body !== "object" || body === null) return null;
  const fields = body as Record<string, unknown>;
  if (fields.type === "webhook_attempt") {
    return typeof fields.delivery_id === "string" ? { type: "webhook_attempt", delivery_id: fields.delivery_id } : null;
  }
  if (fields.type === "notify_digest") {
    const { app_id: appId, channel, recipient } = fields;
    return typeof appId === "string" && (channel === "email" || channel === "push") && typeof recipient === "string"
      ? { type: "notify_digest", app_id: appId, channel, recipient } : null;
  }
  const pointer = fields as Partial<OutboxPointer>;
  if (typeof pointer.outbox_id === "string" && typeof pointer.app_id === "string" && Number.isSafeInteger(pointer.entry_id)
    && typeof pointer.kind === "string" && KINDS.has(pointer.kind) && typeof pointer.rule_id === "string") {
    return { type: "outbox", pointer: pointer as OutboxPointer };
  }
  return null;
}
