/**
 * What the account parts keep about one app — transfers, favorites, views, dismissed
 * upgrade badges and preview tokens — goes with the app when it is purged. (Flow
 * counters stay: they are the owner's history for the month.)
 */
export async function deleteAppAccountData(env: { DB: D1Database }, appId: string): Promise<void> {
  await env.DB.batch(["app_transfers", "app_favorites", "app_views", "upgrade_dismissals", "preview_tokens"]
    .map((table) => env.DB.prepare(`DELETE FROM ${table} WHERE app_id = ?1`).bind(appId)));
}
