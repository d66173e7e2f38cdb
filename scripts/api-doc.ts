// Writes docs/api.md: our hand-written conventions followed by a reference of every
// endpoint, generated from the OpenAPI document (itself generated from the zod schemas
// the routes validate with). `npm run docs:api` rewrites it; a test fails when it is stale.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderApiDoc } from "./api-doc-render";

const target = fileURLToPath(new URL("../docs/api.md", import.meta.url));
writeFileSync(target, renderApiDoc());
console.log("wrote docs/api.md");
