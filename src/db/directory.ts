/**
 * The people and agents behind an app, as the page's `members.list()` / `nameFor()` see
 * them (`GET /_svc/members` on the app origin): the owner, the members in the order they
 * joined, and the owner's agents. Only what a name needs is read; emails leave this module
 * only as the fallback for a member who set no name, and never reach the page.
 */
import { getHuman, type HumanRow } from "./humans";

type Env = { DB: D1Database };

export interface AppDirectory {
  owner: HumanRow | undefined;
  members: Array<{ id: string; name: string | null; email: string }>;
  agents: Array<{ id: string; name: string | null }>;
}

/** The owner, members and owner's agents of `app`, each list oldest first. */
export async function appDirectory(env: Env, app: { id: string; ownerHumanId: string }): Promise<AppDirectory> {
  const [owner, members, agents] = await Promise.all([
    getHuman(env, app.ownerHumanId),
    env.DB.prepare(`SELECT h.id, h.name, h.email FROM app_members m JOIN humans h ON h.id = m.human_id
      WHERE m.app_id = ?1 ORDER BY m.created_at, m.human_id`).bind(app.id).all<{ id: string; name: string | null; email: string }>(),
    env.DB.prepare("SELECT id, name FROM agents WHERE owner_human_id = ?1 ORDER BY created_at, id").bind(app.ownerHumanId).all<{ id: string; name: string | null }>(),
  ]);
  return { owner, members: members.results, agents: agents.results };
}
