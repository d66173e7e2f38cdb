// Publisher profiles (WIRE §2.10): an unclaimed profile, claiming a permanent handle
// (verified email required, taken and repeated claims refused), editing with null clearing
// and omitted fields untouched, and every bad input refused with nothing changed.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, register } from "../helpers";
import { person, type Obj } from "./helpers";

type Profile = Obj & { handle: string | null; claimed: boolean; trust_level: string };

function uniqueHandle(): string {
  return `pub-${crypto.randomUUID().slice(0, 8)}`;
}

describe("publisher profile", () => {
  it("answers an unclaimed profile, claims a handle once, and refuses a taken one", async () => {
    const alice = await person();
    const fresh = await json<Profile>(await call("/v1/publisher", { key: alice.key }), 200);
    expect(fresh).toMatchObject({
      handle: null, display_name: null, bio: null, url: null, claimed: false, claimed_at: null,
      first_published_at: null, approved_template_count: 0, rating_count: 0, rating_sum: 0, trust_level: "new",
    });
    expect(typeof fresh.created_at).toBe("string");

    const handle = uniqueHandle();
    const claimed = await json<Profile>(await call("/v1/publisher/claim", { key: alice.key, json: { handle } }), 200);
    expect(claimed).toMatchObject({ handle, claimed: true, created_at: fresh.created_at });
    expect(typeof claimed.claimed_at).toBe("string");
    await expectError(await call("/v1/publisher/claim", { key: alice.key, json: { handle: uniqueHandle() } }), 409, "handle_already_claimed");

    const bob = await person();
    await expectError(await call("/v1/publisher/claim", { key: bob.key, json: { handle } }), 409, "handle_taken");
    expect((await json<Profile>(await call("/v1/publisher", { key: bob.key }), 200)).handle).toBeNull();
    expect((await json<Profile>(await call("/v1/publisher", { key: alice.key }), 200)).handle).toBe(handle);
  });

  it("refuses bad handles, an unverified email and an unclaimed agent", async () => {
    const carol = await person();
    for (const handle of ["ab", "-abc", "abc-", "ABC", "a_b_c", "x".repeat(33), 42]) {
      await expectError(await call("/v1/publisher/claim", { key: carol.key, json: { handle } }), 400, "invalid_request");
    }
    await expectError(await call("/v1/publisher/claim", { key: carol.key, json: { handle: uniqueHandle(), extra: 1 } }), 400, "invalid_request");
    await env.DB.prepare("UPDATE humans SET email_verified_at = NULL WHERE id = ?1").bind(carol.human.humanId).run();
    await expectError(await call("/v1/publisher/claim", { key: carol.key, json: { handle: uniqueHandle() } }), 403, "email_not_verified");
    expect((await json<Profile>(await call("/v1/publisher", { key: carol.key }), 200)).claimed).toBe(false);

    const loose = await register();
    await expectError(await call("/v1/publisher", { key: loose.api_key }), 403, "agent_not_claimed");
    await expectError(await call("/v1/publisher"), 401, "unauthorized");
  });

  it("updates display fields: null clears, omitted stays, limits refused", async () => {
    const dana = await person();
    const update = (body: unknown) => call("/v1/publisher/update", { key: dana.key, json: body });
    const set = await json<Profile>(await update({ display_name: "Dana", bio: "Makes small apps.", url: "https://dana.example.com" }), 200);
    expect(set).toMatchObject({ display_name: "Dana", bio: "Makes small apps.", url: "https://dana.example.com" });
    const partly = await json<Profile>(await update({ bio: null }), 200);
    expect(partly).toMatchObject({ display_name: "Dana", bio: null, url: "https://dana.example.com" });

    for (const bad of [
      { display_name: "x".repeat(81) }, { display_name: "" }, { bio: "x".repeat(501) }, { url: "ftp://dana.example.com" },
      { url: `https://example.com/${"x".repeat(200)}` }, { url: "not a url" }, { handle: "sneaky" }, { display_name: 5 },
    ]) {
      await expectError(await update(bad), 400, "invalid_request");
    }
    expect(await json<Profile>(await call("/v1/publisher", { key: dana.key }), 200)).toMatchObject({ display_name: "Dana", bio: null, url: "https://dana.example.com" });
  });

  it("sums the stars of visible reviews only", async () => {
    const erin = await person();
    const review = (id: string, stars: number, status: string) => env.DB.prepare(
      "INSERT INTO template_reviews (id, install_id, snapshot_id, template_publisher_human_id, template_slug, reviewer_human_id, stars, status, created_at) VALUES (?1, ?2, 'tpl_x', ?3, 'todo', 'h_reviewer', ?4, ?5, ?6)",
    ).bind(id, `inst_${id}`, erin.human.humanId, stars, status, new Date().toISOString()).run();
    const tag = crypto.randomUUID().slice(0, 8);
    await review(`rv_${tag}_1`, 4, "visible");
    await review(`rv_${tag}_2`, 5, "visible");
    await review(`rv_${tag}_3`, 1, "held");
    await review(`rv_${tag}_4`, 1, "removed");
    expect(await json<Profile>(await call("/v1/publisher", { key: erin.key }), 200)).toMatchObject({ rating_count: 2, rating_sum: 9 });
  });
});
