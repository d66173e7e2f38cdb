// Publisher trust (WIRE §2.10): an operator sets a claimed handle's trust level; an
// established publisher's submission is approved on arrival while it reaches no
// destination the slug's approved version did not, and queues for review when it does.
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { asOperator, deployApp, person, publish, todoManifest, type Obj } from "./helpers";

type Answer = { snapshot_id: string; review_status: string; auto_approved: boolean; expedited: boolean };

describe("publisher trust", { timeout: 60_000 }, () => {
  it("auto-approves an established publisher's submission unless it reaches a new destination", async () => {
    const operator = await person("operator");
    const owner = await person();
    const handle = `pub-${crypto.randomUUID().slice(0, 8)}`;
    await json(await call("/v1/publisher/claim", { key: owner.key, json: { handle } }), 200);
    const appId = await deployApp(owner);

    const beforeTrust = await json<Answer>(await publish(owner, { app_id: appId, slug: "plain-todo" }), 201);
    expect(beforeTrust).toMatchObject({ review_status: "pending", auto_approved: false });

    const profile = await json<Obj>(await asOperator(operator, `/v1/community/publishers/${handle}/trust`, { json: { trust_level: "established" } }), 200);
    expect(profile).toMatchObject({ handle, trust_level: "established" });
    const trusted = await json<Answer>(await publish(owner, { app_id: appId, slug: "plain-todo", version: "1.0.1" }), 201);
    expect(trusted).toMatchObject({ review_status: "approved", auto_approved: true });
    const detail = await json<Obj>(await asOperator(operator, `/v1/community/submissions/${trusted.snapshot_id}`), 200);
    expect(detail).toMatchObject({ review_status: "approved", publisher_trust_level: "established" });

    // The next version fetches from a new host: it waits for an operator, ahead of the queue.
    const wider = await deployApp(owner, todoManifest({ externalHosts: ["https://api.new-host.example.com"] }));
    const widened = await json<Answer>(await publish(owner, { app_id: wider, slug: "plain-todo", version: "1.1.0" }), 201);
    expect(widened).toMatchObject({ review_status: "pending", auto_approved: false, expedited: true });

    const demoted = await json<Obj>(await asOperator(operator, `/v1/community/publishers/${handle}/trust`, { json: { trust_level: "new" } }), 200);
    expect(demoted.trust_level).toBe("new");
    expect((await json<Answer>(await publish(owner, { app_id: appId, slug: "plain-todo", version: "1.2.0" }), 201)).review_status).toBe("pending");

    await expectError(await asOperator(operator, "/v1/community/publishers/nobody-has-this/trust", { json: { trust_level: "new" } }), 404, "publisher_not_found");
    await expectError(await asOperator(operator, `/v1/community/publishers/${handle}/trust`, { json: { trust_level: "trusted" } }), 400, "invalid_request");
    await expectError(await asOperator(operator, `/v1/community/publishers/${handle}/trust`, { json: {} }), 400, "invalid_request");
  });
});
