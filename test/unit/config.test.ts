// config(): every setting's default, parsing, and the per-environment cache.
import { describe, expect, it } from "vitest";
import { config } from "../../src/config";

describe("config defaults", () => {
  it("an empty environment is production, closed, with the documented defaults", () => {
    const c = config({});
    expect(c.development).toBe(false);
    expect(c.apiOrigin).toBe("http://localhost:8787");
    expect(c.appsDomain).toBe("localhost:8787");
    expect(c.registrationMode).toBe("closed");
    expect(c.registrationSecret).toBeNull();
    expect(c.minCliVersion).toBeNull();
    expect(c.operatorEmails).toEqual([]);
    expect(c.rateLimit).toEqual({ windowSeconds: 60, register: 10, deviceCode: 10, deviceToken: 60, requestLink: 5, claim: 10, invite: 20, pageWrite: 60, ingest: 120 });
    expect(c.maxJsonBodyBytes).toBe(1_048_576);
  });

  it("has CONTRACT §7's limit defaults", () => {
    const { limits } = config({});
    expect(limits).toMatchObject({
      MAX_APPS_PER_ACCOUNT: 100, MAX_ROWS_PER_APP: 1000, MAX_COLLECTIONS_PER_APP: 50, MAX_EMBEDS: 50,
      MAX_EXTERNAL_HOSTS: 50, MAX_CONNECTIONS_PER_APP: 20, BATCH_MAX_ROWS: 100, MAX_ROW_DATA_BYTES: 65_536,
      MAX_DOCUMENT_BYTES: 2_097_152, MAX_ATTACHMENT_BYTES: 5_000_000, INGEST_MAX_BODY_BYTES: 65_536,
    });
  });

  it("development mode defaults registration to open; an explicit mode wins", () => {
    expect(config({ RELAY_ENV: "development" }).registrationMode).toBe("open");
    expect(config({ RELAY_ENV: "development", REGISTRATION_MODE: "closed" }).registrationMode).toBe("closed");
    expect(config({ REGISTRATION_MODE: "secret" }).registrationMode).toBe("secret");
    expect(config({ REGISTRATION_MODE: "OPEN" }).registrationMode).toBe("closed");
    expect(config({ RELAY_ENV: "Development" }).development).toBe(false);
  });

  it("development mode turns each per-IP limiter bucket off unless its variable is set; production keeps the defaults", () => {
    const production = config({}).rateLimit;
    expect(production).toEqual({ windowSeconds: 60, register: 10, deviceCode: 10, deviceToken: 60, requestLink: 5, claim: 10, invite: 20, pageWrite: 60, ingest: 120 });
    const development = config({ RELAY_ENV: "development" }).rateLimit;
    expect(development).toEqual({ windowSeconds: 60, register: 0, deviceCode: 0, deviceToken: 0, requestLink: 0, claim: 0, invite: 0, pageWrite: 0, ingest: 0 });
    const oneOn = config({ RELAY_ENV: "development", RATE_LIMIT_CLAIM: "3" }).rateLimit;
    expect(oneOn).toMatchObject({ claim: 3, register: 0, invite: 0 });
    // Set but unreadable: the limit is on, at the production default.
    expect(config({ RELAY_ENV: "development", RATE_LIMIT_REGISTER: "many" }).rateLimit.register).toBe(10);
    expect(config({ RELAY_ENV: "development", RATE_LIMIT_REGISTER: " " }).rateLimit.register).toBe(0);
  });

  it("the effect gates are on by default in development mode, off or on as set; production keeps its defaults", () => {
    const gates = ["WEBHOOKS_ENABLED", "SCHEDULES_ENABLED", "NOTIFY_EXTERNAL_ENABLED", "NOTIFY_INAPP_ENABLED", "NOTIFY_PUSH_ENABLED"];
    const development = config({ RELAY_ENV: "development" }).flags;
    expect(gates.map((gate) => development[gate])).toEqual([true, true, true, true, true]);
    expect(config({ RELAY_ENV: "development", NOTIFY_PUSH_ENABLED: "false" }).flags.NOTIFY_PUSH_ENABLED).toBe(false);
    const production = config({}).flags;
    expect(gates.map((gate) => production[gate])).toEqual([true, true, false, false, false]);
    expect(config({ RELAY_ENV: "development" }).flags.BLOB_ENCRYPT_AT_REST).toBe(false);
  });

  it("reads the webhook retry schedule, falling back to the default for its mode on anything unreadable", () => {
    const minute = 60_000;
    expect(config({}).webhookRetryDelaysMs).toEqual([5_000, 5 * minute, 30 * minute, 120 * minute, 300 * minute, 600 * minute, 600 * minute]);
    expect(config({ RELAY_ENV: "development" }).webhookRetryDelaysMs).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000]);
    expect(config({ WEBHOOKS_RETRY_SCHEDULE: " 250ms, 1.5s ,2m,1h" }).webhookRetryDelaysMs).toEqual([250, 1_500, 2 * minute, 60 * minute]);
    for (const bad of ["", "soon", "5s,,5m", "-1s", "5 s", "5d"]) {
      expect(config({ WEBHOOKS_RETRY_SCHEDULE: bad }).webhookRetryDelaysMs[0]).toBe(5_000);
    }
    expect(config({}).limits.WEBHOOKS_MAX_ATTEMPTS).toBe(8);
  });

  it("parses numbers, falling back on garbage, negatives and blanks", () => {
    expect(config({ RATE_LIMIT_REGISTER: "3" }).rateLimit.register).toBe(3);
    expect(config({ RATE_LIMIT_REGISTER: "0" }).rateLimit.register).toBe(0);
    expect(config({ RATE_LIMIT_REGISTER: "many" }).rateLimit.register).toBe(10);
    expect(config({ RATE_LIMIT_REGISTER: "-1" }).rateLimit.register).toBe(10);
    expect(config({ RATE_LIMIT_REGISTER: "  " }).rateLimit.register).toBe(10);
    expect(config({ RATE_LIMIT_REGISTER: "Infinity" }).rateLimit.register).toBe(10);
    expect(config({ MAX_JSON_BODY_BYTES: " 2048 " }).maxJsonBodyBytes).toBe(2048);
    expect(config({ MAX_ROWS_PER_APP: 7 }).limits.MAX_ROWS_PER_APP).toBe(1000);
  });

  it("parses flags and lists", () => {
    expect(config({}).flags).toMatchObject({ WEBHOOKS_ENABLED: true, SCHEDULES_ENABLED: true, NOTIFY_EXTERNAL_ENABLED: false, BLOB_ENCRYPT_AT_REST: false });
    expect(config({ WEBHOOKS_ENABLED: "false" }).flags.WEBHOOKS_ENABLED).toBe(false);
    expect(config({ NOTIFY_PUSH_ENABLED: "1" }).flags.NOTIFY_PUSH_ENABLED).toBe(true);
    expect(config({ NOTIFY_PUSH_ENABLED: "yes" }).flags.NOTIFY_PUSH_ENABLED).toBe(false);
    expect(config({ COMMUNITY_REVIEW_OPERATOR_EMAILS: " Ops@Example.com, ,b@x.org " }).operatorEmails).toEqual(["ops@example.com", "b@x.org"]);
  });

  it("trims strings and trailing slashes of the API origin", () => {
    const c = config({ API_ORIGIN: " https://relay.example.com/// ", REGISTRATION_SECRET: "  s  ", MIN_CLI_VERSION: " 1.2.3 " });
    expect(c.apiOrigin).toBe("https://relay.example.com");
    expect(c.registrationSecret).toBe("s");
    expect(c.minCliVersion).toBe("1.2.3");
    expect(config({ REGISTRATION_SECRET: "" }).registrationSecret).toBeNull();
  });

  it("is computed once per environment object", () => {
    const envA = { RATE_LIMIT_CLAIM: "4" };
    expect(config(envA)).toBe(config(envA));
    expect(config({ ...envA }).rateLimit.claim).toBe(4);
    expect(config({ ...envA })).not.toBe(config(envA));
  });
});
