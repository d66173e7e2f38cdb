// The signing secret and `verify: { scheme: "github" }` (WIRE §2.7, §6.3; spec B): fail-closed
// until a secret is set; a missing, malformed, forged or replayed-with-another-body
// signature is the same 401 and never writes or journals; a minted `ihk_` secret is shown
// once, a supplied one never; the previous secret verifies through its grace window;
// clearing closes the hook again.
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { deployIngest, githubSignature, post } from "./fixtures";

describe("inbound hook signatures", { timeout: 60_000 }, () => {
  it("fail-closed, then only a valid X-Hub-Signature-256 over the raw body writes", async () => {
    const t = await deployIngest([{ name: "gh", collection: "issues", map: { title: "issue.title" }, verify: { scheme: "github" } }]);
    const { url } = await t.hook("gh");
    const body = JSON.stringify({ issue: { title: "signed" } });
    // No secret yet: even a signature made with some secret is refused.
    await expectError(await post(url, body, { headers: { "x-hub-signature-256": await githubSignature("ihk_guess", body) } }), 401, "ingest_signature_invalid");

    const minted = await json<{ secret: string; fingerprint: string; setAt: string }>(
      await call(`/v1/apps/${t.appId}/ingest-hooks/gh/signing-secret`, { key: t.key, method: "PUT", json: {} }), 200);
    expect(minted.secret).toMatch(/^ihk_[0-9a-f]{32}$/);
    expect(minted.fingerprint).toMatch(/^[0-9a-f]{8}$/);
    expect((await t.hook("gh")).signingSecret).toMatchObject({ configured: true, fingerprint: minted.fingerprint, setAt: minted.setAt, previousUntil: null });
    expect(JSON.stringify(await t.hooks())).not.toContain(minted.secret);

    const good = await githubSignature(minted.secret, body);
    const other = JSON.stringify({ issue: { title: "tampered" } });
    for (const signature of [undefined, "", "sha256=", "sha1=abc", good.replace("sha256=", ""), await githubSignature("ihk_wrong", body), `sha256=${"0".repeat(64)}`]) {
      const headers: Record<string, string> = signature === undefined ? {} : { "x-hub-signature-256": signature };
      await expectError(await post(url, body, { headers }), 401, "ingest_signature_invalid");
    }
    // The right signature of another body (a replay with the body changed) is refused too.
    await expectError(await post(url, other, { headers: { "x-hub-signature-256": good } }), 401, "ingest_signature_invalid");
    expect(await t.rows()).toEqual([]);
    expect(await t.deliveries()).toEqual([]);

    await json(await post(url, body, { headers: { "X-Hub-Signature-256": good } }), 200);
    expect((await t.rows()).map((row) => row.data.title)).toEqual(["signed"]);
  });

  it("a supplied secret replaces the minted one; the old one verifies during the grace, not with graceSeconds 0; clear closes the hook", async () => {
    const t = await deployIngest([{ name: "gh", collection: "issues", map: { title: "t" }, verify: { scheme: "github" } }]);
    const { url } = await t.hook("gh");
    const path = `/v1/apps/${t.appId}/ingest-hooks/gh/signing-secret`;
    const first = (await json<{ secret: string }>(await call(path, { key: t.key, method: "PUT" }), 200)).secret;
    const supplied = "my-own-signing-secret-123";
    const set = await json<Record<string, unknown>>(await call(path, { key: t.key, method: "PUT", json: { secret: supplied, graceSeconds: 600 } }), 200);
    expect(Object.keys(set).sort()).toEqual(["fingerprint", "setAt"]);
    const previousUntil = (await t.hook("gh")).signingSecret.previousUntil!;
    expect(Date.parse(previousUntil) - Date.parse(set.setAt as string)).toBe(600_000);
    const send = async (secret: string, title: string) => post(url, JSON.stringify({ t: title }), { headers: { "x-hub-signature-256": await githubSignature(secret, JSON.stringify({ t: title })) } });
    await json(await send(first, "old secret in grace"), 200);
    await json(await send(supplied, "new secret"), 200);

    await json(await call(path, { key: t.key, method: "PUT", json: { secret: "another-secret-0000001", graceSeconds: 0 } }), 200);
    await expectError(await send(supplied, "no grace"), 401, "ingest_signature_invalid");
    await json(await send("another-secret-0000001", "third"), 200);

    expect(await json(await call(path, { key: t.key, method: "DELETE" }), 200)).toEqual({ ok: true });
    expect(await json(await call(path, { key: t.key, method: "DELETE" }), 200)).toEqual({ ok: true });
    expect((await t.hook("gh")).signingSecret).toEqual({ configured: false, fingerprint: null, setAt: null, previousUntil: null });
    await expectError(await send("another-secret-0000001", "cleared"), 401, "ingest_signature_invalid");
    expect((await t.rows()).map((row) => row.data.title).sort()).toEqual(["new secret", "old secret in grace", "third"]);

    await expectError(await call(path, { key: t.key, method: "PUT", json: { graceSeconds: 86_401 } }), 400, "invalid_request");
    await expectError(await call(path, { key: t.key, method: "PUT", json: { secret: "short" } }), 400, "invalid_request");
    await expectError(await call(`/v1/apps/${t.appId}/ingest-hooks/nope/signing-secret`, { key: t.key, method: "PUT" }), 404, "ingest_not_found");
  });
});
