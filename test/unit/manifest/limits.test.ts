// The module takes limits as a plain object; its defaults must match the relay's settings.
import { describe, expect, it } from "vitest";
import { config } from "../../../src/config";
import { DEFAULT_LIMITS, manifestLimitsFrom, parseManifest, resolveLimits } from "../../../src/manifest";
import { errorOf, manifest } from "./helpers";

describe("limits", () => {
  it("defaults equal src/config.ts defaults", () => {
    const settings = config({});
    const fromConfig = resolveLimits(manifestLimitsFrom(settings));
    expect(fromConfig).toEqual(DEFAULT_LIMITS);
  });

  it("config values flow through", () => {
    const settings = config({ MAX_COLLECTIONS_PER_APP: "1", NOTIFY_EXTERNAL_ENABLED: "true", RELAY_ENV: "development" });
    const limits = manifestLimitsFrom(settings);
    expect(resolveLimits(limits)).toMatchObject({ MAX_COLLECTIONS_PER_APP: 1, NOTIFY_EXTERNAL_ENABLED: true, development: true });
    const err = errorOf(() => parseManifest(manifest({ collections: { a: {}, b: {} } }), limits));
    expect(err.code).toBe("too_many_collections");
    expect(err.details).toMatchObject({ path: "x-service-manifest.collections", limit: 1 });
  });

  it("ignores values of the wrong type", () => {
    expect(resolveLimits({ MAX_EMBEDS: Number.NaN, NOTIFY_PUSH_ENABLED: "yes" as unknown as boolean })).toEqual(DEFAULT_LIMITS);
  });
});
