// The worker project's global setup: the loopback webhook receiver (webhook-receiver.ts),
// its origin handed to the tests as `inject("webhookReceiver")`.
import type { TestProject } from "vitest/node";
import { startWebhookReceiver } from "./webhook-receiver";
import "./webhook-receiver-types";

export default async function setup(project: TestProject) {
  const receiver = await startWebhookReceiver();
  project.provide("webhookReceiver", receiver.origin);
  return () => receiver.close();
}
