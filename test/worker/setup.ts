// Applies the D1 migrations before each test file, as `wrangler d1 migrations apply` would.
import { applyD1Migrations, env } from "cloudflare:test";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
