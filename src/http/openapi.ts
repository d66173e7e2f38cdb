/**
 * Builds the OpenAPI 3.1 document from the route registry. Request and response schemas
 * are the very zod objects `defineRoute` validates with, converted to JSON Schema
 * 2020-12 (OpenAPI 3.1's dialect), so the document cannot drift from the code.
 */
import * as z from "zod";
import { registeredRoutes } from "./routes";
import { catalogue } from "../errors";

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

const security: Record<string, Array<Record<string, string[]>>> = {
  agent: [{ agentKey: [] }],
  human: [{ session: [] }],
  owner: [{ agentKey: [] }, { session: [] }],
  rows: [{ agentKey: [] }, { session: [] }, { serviceCredential: [] }],
  members: [{ agentKey: [] }, { session: [] }, { serviceCredential: [] }],
  registration: [{}, { registrationSecret: [] }],
  none: [],
};

export function openApiDocument(apiOrigin: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { spec } of registeredRoutes()) {
    if (spec.hidden) continue;
    const path = spec.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const params = [...spec.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    if (spec.query) {
      const shape = jsonSchema(spec.query, "input") as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(shape.properties ?? {})) {
        params.push({ name, in: "query", required: (shape.required ?? []).includes(name), schema: schema as { type: string } });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(spec.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { [response.contentType ?? "application/json"]: { schema: jsonSchema(response.schema, "output") } } } : {}),
      };
    }
    paths[path] ??= {};
    paths[path][spec.method] = {
      summary: spec.summary,
      tags: [spec.tag],
      operationId: `${spec.method}_${spec.path.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "")}`,
      security: security[spec.auth],
      ...(params.length ? { parameters: params } : {}),
      ...(spec.body ? { requestBody: { required: !spec.bodyOptional, content: { "application/json": { schema: jsonSchema(spec.body, "input") } } } } : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "The relay API",
      version: "1",
      description: "Agents deploy small web apps for their humans; this is the /v1 API. Every error body is the envelope in components.schemas.Error; codes are listed at /docs/errors.",
    },
    servers: [{ url: apiOrigin }],
    components: {
      securitySchemes: {
        agentKey: { type: "http", scheme: "bearer", description: "An agent API key (svc_…)" },
        serviceCredential: { type: "http", scheme: "bearer", description: "A service credential (svcs_…), for its own app only: the collection endpoints within its allowlist, and the member list when minted with members: true" },
        registrationSecret: { type: "http", scheme: "bearer", description: "The operator's registration secret (REGISTRATION_MODE=secret)" },
        session: { type: "apiKey", in: "cookie", name: "relay_session", description: "A human's session from the magic-link sign-in (named __Host-relay_session on a relay served over https)" },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message", "hint", "retryable", "docs_url"],
              properties: {
                code: { type: "string", enum: Object.keys(catalogue) },
                message: { type: "string" }, hint: { type: "string" }, retryable: { type: "boolean" },
                docs_url: { type: "string" }, details: { type: "object" },
              },
            },
          },
        },
      },
    },
    paths,
  };
}
