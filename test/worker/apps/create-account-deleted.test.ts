// An account deleted while one of its creates was under way (issue 16, faults). The
// deletion's batch trashes the apps it sees and removes the person; a create, a seeding
// create's hand-over or a restore that lands after it must not leave a live app owned by
// an account that no longer exists (served, listed to no one, never trashed nor purged).
// Each is held just before its last step, the account is deleted through the real
// confirmation, and the step is let go: the answer is 401 `unauthorized`, nothing of the
// account is live, and a held create leaves no app at all. A transfer accepted by a
// person whose account is deleted meanwhile leaves the app with its giver.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callWith, expectError, signIn, type SignedIn } from "../helpers";
import { deploy, MANIFEST, owner, type Owner } from "./fixtures";
import { heldSeed } from "./held-seed";
import { mailedToken, offer, setup } from "../account/fixtures";
import { confirmDeletion, requestDeletion } from "../../../src/account/deletion";
import { restoreTrashedApp } from "../../../src/apps/trash";
import { acceptTransfer } from "../../../src/account/transfers";
import { findAppForOwner } from "../../../src/db/apps";
import { RelayError } from "../../../src/errors";

async function deleteAccount(who: Owner | { human: SignedIn }): Promise<void> {
  const { email } = await requestDeletion(env, who.human.humanId);
  await confirmDeletion(env, await mailedToken(email, "account/delete"));
}

/** Apps of any status whose owner is this (deleted) person or a placeholder acting for them. */
async function appsLeft(humanId: string): Promise<Array<{ status: string }>> {
  return (await env.DB.prepare("SELECT status FROM apps WHERE owner_human_id = ?1 OR owner_human_id = ?2")
    .bind(humanId, `seeding:${humanId}`).all<{ status: string }>()).results;
}

/** The real R2 bucket, whose first `put` (the create's document) waits for `gate` after calling `reached`. */
function bucketHeldAtFirstPut(reached: () => void, gate: Promise<void>): R2Bucket {
  let first = true;
  return new Proxy(env.BLOBS, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== "function") return value;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== "put") return method;
      return async (...args: unknown[]) => {
        if (first) {
          first = false;
          reached();
          await gate;
        }
        return method(...args);
      };
    },
  });
}

describe("an account deleted while its create is under way", { timeout: 60_000 }, () => {
  it("a plain create that lands after the deletion answers 401 and makes no app", async () => {
    const who = await owner();
    let reached!: () => void;
    let release!: () => void;
    const atPut = new Promise<void>((resolve) => { reached = resolve; });
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const html = `<h1>made while deleting ${crypto.randomUUID()}</h1>`;
    const answer = callWith({ BLOBS: bucketHeldAtFirstPut(reached, gate) }, "/v1/apps", { key: who.key, json: { html, manifest: MANIFEST, visibility: "public" } });
    await atPut;
    await deleteAccount(who);
    release();
    await expectError(await answer, 401, "unauthorized");
    expect(await appsLeft(who.human.humanId)).toEqual([]);
  });

  it("a create with starter rows whose hand-over comes after the deletion answers 401 and leaves no app", async () => {
    const who = await owner();
    const held = heldSeed(who.key, { html: "<h1>seeded</h1>", manifest: MANIFEST, visibility: "public", input_data: { notes: [{ data: { text: "starter" } }] } });
    await held.reached;
    await deleteAccount(who);
    held.release();
    await expectError(await held.answer, 401, "unauthorized");
    expect(await appsLeft(who.human.humanId)).toEqual([]);
  });

  it("a restore that comes after the deletion is refused with 401 and the app stays in the trash", async () => {
    const who = await owner();
    const made = await deploy(who.key);
    const before = (await findAppForOwner(env, who.human.humanId, made.app_id))!;
    await deleteAccount(who);
    const trashed = (await findAppForOwner(env, who.human.humanId, made.app_id))!;
    expect([before.status, trashed.status]).toEqual(["active", "deleted"]);
    const refusal = await restoreTrashedApp(env, trashed).then(() => null, (err: unknown) => err);
    expect(refusal).toBeInstanceOf(RelayError);
    expect((refusal as RelayError).code).toBe("unauthorized");
    expect(await appsLeft(who.human.humanId)).toEqual([{ status: "deleted" }]);
  });

  it("a transfer accepted by a person whose account was deleted after their session was checked leaves the app with its giver", async () => {
    const giver = await setup();
    const taker = await signIn();
    const { token } = await offer(giver, taker.email);
    await deleteAccount({ human: taker });
    const refusal = await acceptTransfer(env, token, { humanId: taker.humanId, email: taker.email }, () => undefined).then(() => null, (err: unknown) => err);
    expect(refusal).toBeInstanceOf(RelayError);
    expect(await appsLeft(taker.humanId)).toEqual([]);
    const owner = await env.DB.prepare("SELECT owner_human_id AS owner FROM apps WHERE id = ?1").bind(giver.app.app_id).first<string>("owner");
    expect(owner).toBe(giver.who.human.humanId);
  });
});
