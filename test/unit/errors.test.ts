// The error catalogue (spec B Errors, WIRE §1.3, CONTRACT §5): every spec code with its
// status, only the two retryable codes, and a hint and meaning for each.
import { describe, expect, it } from "vitest";
import { catalogue, errorBody, isErrorCode, RelayError } from "../../src/errors";

/** Spec B's table of named codes, with their statuses, copied verbatim. */
const SPEC_B: Record<string, number> = {
  account_quota_exceeded: 409, agent_not_claimed: 403, app_not_found: 404, app_quota_exceeded: 409,
  append_only: 403, attachment_not_found: 404, attachment_ref_not_accessible: 422, attachment_size_exceeded: 413,
  attachment_token_invalid: 401, attachment_token_not_found: 404, author_not_allowed: 403, capability_invalid: 400,
  cli_upgrade_required: 426, collection_count_forbidden: 403, collection_delete_forbidden: 403,
  collection_name_invalid: 400, collection_not_found: 404, collection_read_forbidden: 403,
  collection_schema_invalid: 400, collection_write_forbidden: 403, community_publish_disabled: 403, conflict: 409,
  connection_invalid: 400, connection_limit_reached: 409, connection_not_found: 404, consent_owner_only: 403,
  csrf_origin_mismatch: 403, custom_domains_not_enabled: 501, domain_exists: 409, domain_invalid: 400,
  domain_not_found: 404, domain_taken: 409, email_not_verified: 403, embed_invalid: 400, external_host_invalid: 400,
  forbidden: 403, gone: 410, grant_invalid: 401, ingest_invalid: 400, ingest_not_found: 404,
  ingest_payload_too_large: 413, ingest_signature_invalid: 401, ingest_unsupported_media_type: 415,
  ingest_write_unavailable: 503, input_schema_violation: 422, invalid_request: 400,
  manifest_incompatible_redeploy: 422, manifest_invalid: 400, manifest_too_large: 413, method_not_allowed: 405,
  mime_disallowed: 415, mime_mismatch: 415, not_a_reviewer: 403, not_found: 404, not_implemented: 501,
  notify_invalid: 400, notify_submitter_not_enabled: 400, participant_token_invalid: 401, payload_too_large: 413,
  permission_role_invalid: 400, purge_forbidden: 403, quota_exceeded: 413, rate_limited: 429,
  resync_required: 410, row_not_found: 404, row_schema_violation: 422, schedule_invalid: 400,
  schema_incompatible_upgrade: 422, schema_violation: 422, slug_not_allowed_for_link: 400, slug_taken: 409,
  soft_deleted: 410, too_many_collections: 400, too_many_embeds: 400, too_many_external_hosts: 400,
};

/** Spec B's unnamed entries, under the names docs/decisions gave them, with the spec's statuses. */
const SPEC_B_UNNAMED: Record<string, number> = {
  agent_task_invalid: 400, anon_write_budget_exceeded: 409, credential_scope_forbidden: 403,
  notify_channel_not_enabled: 400, relation_set_forbidden: 403, turnstile_required: 403,
  turnstile_verification_failed: 403, unauthorized: 401, unique_backfill_conflict: 409, unique_conflict: 409,
  event_type_not_declared: 422, upload_forbidden: 403, webhook_invalid: 400, connection_status_forbidden: 403,
};

/** WIRE §1.3's additions, with the statuses it states. */
const WIRE_ADDITIONS: Record<string, number | null> = {
  unique_conflict: 409, unique_backfill_conflict: 409, restore_conflict: 409, restore_expired: 410,
  server_set_field_supplied: 422, server_set_source_missing: 422, relation_set_forbidden: 403,
  row_size_exceeded: 413, document_size_exceeded: 413, turnstile_required: null, turnstile_verification_failed: null,
  notify_channel_not_enabled: null, agent_already_claimed: 409, auth_provider_unavailable: 503,
  upload_forbidden: null, unauthorized: null, invalid_api_key: 401,
};

describe("error catalogue", () => {
  it("has every code of spec B's table with the spec's status", () => {
    expect(Object.keys(SPEC_B)).toHaveLength(75);
    for (const [code, status] of Object.entries(SPEC_B)) {
      expect(isErrorCode(code), code).toBe(true);
      expect(catalogue[code as keyof typeof catalogue].status, code).toBe(status);
    }
  });

  it("names every unnamed spec B entry with the spec's status", () => {
    expect(Object.keys(SPEC_B_UNNAMED)).toHaveLength(14);
    for (const [code, status] of Object.entries(SPEC_B_UNNAMED)) {
      expect(isErrorCode(code), code).toBe(true);
      expect(catalogue[code as keyof typeof catalogue].status, code).toBe(status);
    }
  });

  it("has WIRE §1.3's additional codes with their stated statuses", () => {
    for (const [code, status] of Object.entries(WIRE_ADDITIONS)) {
      expect(isErrorCode(code), code).toBe(true);
      if (status !== null) expect(catalogue[code as keyof typeof catalogue].status, code).toBe(status);
    }
  });

  it("marks only rate_limited and ingest_write_unavailable retryable", () => {
    const retryable = Object.entries(catalogue).filter(([, e]) => e.retryable).map(([code]) => code).sort();
    expect(retryable).toEqual(["ingest_write_unavailable", "rate_limited"]);
  });

  it("every entry: snake_case code, an error status, a meaning and a one-line hint", () => {
    for (const [code, e] of Object.entries(catalogue)) {
      expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      expect(e.status, code).toBeGreaterThanOrEqual(400);
      expect(e.status, code).toBeLessThan(600);
      expect(e.meaning.trim().length, code).toBeGreaterThan(0);
      expect(e.hint.trim().length, code).toBeGreaterThan(0);
      expect(e.hint, code).not.toMatch(/\n/);
      expect(e.hint, code).toMatch(/[.!?`)]$/);
    }
  });

  it("identity-flow codes have the statuses the routes rely on", () => {
    expect(catalogue.claim_code_invalid.status).toBe(400);
    expect(catalogue.device_code_invalid.status).toBe(400);
    expect(catalogue.internal_error.status).toBe(500);
    expect(catalogue.internal_error.retryable).toBe(false);
  });

  it("isErrorCode refuses inherited and unknown names", () => {
    expect(isErrorCode("toString")).toBe(false);
    expect(isErrorCode("__proto__")).toBe(false);
    expect(isErrorCode("non_json_response")).toBe(false);
  });

  it("errorBody renders the full envelope with an anchored docs_url", () => {
    const withDetails = errorBody(new RelayError("invalid_request", "bad", { field: "name" }), "https://relay.example.com");
    expect(withDetails).toEqual({
      error: {
        code: "invalid_request", message: "bad", hint: catalogue.invalid_request.hint, retryable: false,
        docs_url: "https://relay.example.com/docs/errors#invalid_request", details: { field: "name" },
      },
    });
    const bare = errorBody(new RelayError("rate_limited"), "http://localhost:8787");
    expect(Object.keys(bare.error).sort()).toEqual(["code", "docs_url", "hint", "message", "retryable"]);
    expect(bare.error.message).toBe(catalogue.rate_limited.meaning);
    expect(bare.error.retryable).toBe(true);
    expect(new RelayError("agent_already_claimed").status).toBe(409);
  });
});
