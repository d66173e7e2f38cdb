/**
 * The effects queue's consumer: each message is one rule a row write triggered, handed
 * over from an AppStore outbox (at least once; `outbox_id` identifies it). The engines
 * that act on them — notify mail, outbound webhooks, agent-task wake — are not part of
 * this relay yet, so each well-formed message is acknowledged and logged as not acted
 * on; a malformed one is acknowledged and reported, never retried forever.
 */

export interface EffectMessage {
  outbox_id: string;
  app_id: string;
  kind: "notify" | "webhooks" | "agentTasks";
  rule_id: string;
  change: { suppressed?: boolean } & Record<string, unknown>;
}

export function isEffectMessage(body: unknown): body is EffectMessage {
  const b = body as Partial<EffectMessage> | null;
  return typeof b === "object" && b !== null && typeof b.outbox_id === "string" && typeof b.app_id === "string"
    && (b.kind === "notify" || b.kind === "webhooks" || b.kind === "agentTasks") && typeof b.rule_id === "string"
    && typeof b.change === "object" && b.change !== null;
}

export async function consumeEffects(batch: MessageBatch<unknown>): Promise<void> {
  for (const message of batch.messages) {
    if (!isEffectMessage(message.body)) {
      console.error("effects: malformed message dropped", message.id);
    } else if (!message.body.change.suppressed) {
      console.log(`effects: ${message.body.kind} rule ${message.body.rule_id} of app ${message.body.app_id} recorded; no engine acts on it in this relay yet`);
    }
    message.ack();
  }
}
