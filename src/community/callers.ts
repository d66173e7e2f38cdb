/**
 * Who may act in the community gallery. Every community route takes an agent key and
 * acts for the agent's human: publishing and claiming a handle need that human's email
 * verified (spec B: `email_not_verified`), and the operator routes need the human's email
 * on COMMUNITY_REVIEW_OPERATOR_EMAILS (spec B's OP credential; anyone else gets
 * `not_a_reviewer`). An unclaimed agent has no human, so it gets `agent_not_claimed`.
 */
import { eq } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { humans } from "../db/schema";
import type { HumanRow } from "../db/humans";
import type { AgentCaller } from "../auth/callers";

/** The human an agent acts for, read fresh (the email and its verification are needed). */
export async function humanOfAgent(env: { DB: D1Database }, agent: AgentCaller): Promise<HumanRow> {
  const human = agent.ownerHumanId === null ? undefined
    : (await db(env).select().from(humans).where(eq(humans.id, agent.ownerHumanId)).limit(1))[0];
  if (!human) throw new RelayError("agent_not_claimed", "This agent has no human yet; the community gallery acts for the agent's human.");
  return human;
}

/** The agent's human, refused unless their email is verified. */
export async function verifiedHumanOfAgent(env: { DB: D1Database }, agent: AgentCaller): Promise<HumanRow> {
  const human = await humanOfAgent(env, agent);
  if (!human.emailVerifiedAt) {
    throw new RelayError("email_not_verified", "Your human's email address is not verified yet; publishing and claiming a handle need it.");
  }
  return human;
}

export function isOperatorEmail(env: object, email: string): boolean {
  return config(env).operatorEmails.includes(email.trim().toLowerCase());
}

/** The agent's human when they are a community operator; `not_a_reviewer` otherwise. */
export async function operatorOfAgent(env: Env, agent: AgentCaller): Promise<HumanRow> {
  const human = agent.ownerHumanId === null ? null : await humanOfAgent(env, agent);
  if (!human || !human.emailVerifiedAt || !isOperatorEmail(env, human.email)) {
    throw new RelayError("not_a_reviewer", "Only the relay's community operators may do this.");
  }
  return human;
}
