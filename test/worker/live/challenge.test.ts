// Anonymous writes to an antiAbuse collection need a verified bot-challenge token in
// x-service-challenge: none → turnstile_required, rejected → turnstile_verification_failed,
// and nothing is written either way. In development the Turnstile test token passes.
import { describe, expect, it } from "vitest";
import { expectError, json } from "../helpers";
import { appCall } from "../serve/helpers";
import { liveApp, liveManifest } from "./helpers";
import { TEST_TOKEN } from "../../../src/auth/turnstile";

const guarded = {
  guestbook: {
    read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"],
    anonWriteBudget: { perIpPerDay: 0, perAppPerDay: 0 }, antiAbuse: "turnstile",
  },
};

describe("bot challenge on anonymous writes", () => {
  it("refuses without a token or with a bad one, and writes with a verified one", async () => {
    const { app } = await liveApp("public", liveManifest(guarded));
    const path = "/_svc/c/guestbook";
    await expectError(await appCall(app.slug, path, { json: { data: { hi: 1 } } }), 403, "turnstile_required");
    await expectError(await appCall(app.slug, path, { json: { data: { hi: 2 } }, headers: { "x-service-challenge": "not-a-real-token" } }), 403, "turnstile_verification_failed");
    const listed = await json<{ rows: unknown[] }>(await appCall(app.slug, path), 200);
    expect(listed.rows).toEqual([]);
    await json(await appCall(app.slug, path, { json: { data: { hi: 3 } }, headers: { "x-service-challenge": TEST_TOKEN } }), 201);
  });
});
