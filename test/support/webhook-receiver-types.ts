/**
 * What the loopback webhook receiver (webhook-receiver.ts) records, and the name under
 * which its origin is provided to the worker tests: shared by the Node side that runs it
 * and the workerd side that reads it, so it imports nothing from either runtime.
 */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

declare module "vitest" {
  export interface ProvidedContext {
    webhookReceiver: string;
  }
}
