// drizzle-kit: generates the D1 SQL migrations in migrations/ from the schema files in src/db/.
import { defineConfig } from "drizzle-kit";
export default defineConfig({ dialect: "sqlite", schema: ["./src/db/schema.ts", "./src/db/apps-schema.ts", "./src/db/serve-schema.ts", "./src/db/members-schema.ts", "./src/db/access-schema.ts", "./src/db/account-schema.ts", "./src/db/effects-schema.ts", "./src/db/notify-schema.ts", "./src/db/schedules-schema.ts", "./src/db/connections-schema.ts", "./src/db/tasks-schema.ts", "./src/db/ingest-schema.ts"], out: "./migrations" });
