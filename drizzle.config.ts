// drizzle-kit: generates the D1 SQL migrations in migrations/ from src/db/schema.ts.
import { defineConfig } from "drizzle-kit";
export default defineConfig({ dialect: "sqlite", schema: "./src/db/schema.ts", out: "./migrations" });
