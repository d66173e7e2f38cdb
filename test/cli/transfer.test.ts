// `service apps transfer` as a real process against the real test relay: offer by
// email (keep-as-member by default, --remove-me), --show the pending offer, --cancel it,
// a plain explanation by default and the relay's answer with --json; relay refusals
// (a second offer while one is pending, nothing to cancel) and local argv errors, which
// never reach the relay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimedCliAgent, cleanupTempHomes, failed, fakeIp, ok, relayUrl, uniqueEmail, type CliAgent } from "./helpers.ts";

type Obj = Record<string, unknown>;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": { app: { name: "Handover" }, collections: { notes: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] } } },
};

async function deployApp(me: CliAgent): Promise<{ app_id: string; slug: string }> {
  const res = await fetch(`${relayUrl()}/v1/apps`, {
    method: "POST", body: JSON.stringify({ html: "<h1>handover</h1>", manifest: MANIFEST, visibility: "private" }),
    headers: { "content-type": "application/json", "cf-connecting-ip": fakeIp(), authorization: `Bearer ${me.key}` },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { app_id: string; slug: string };
}

async function outbox(email: string): Promise<Array<{ subject: string; text: string }>> {
  const res = await fetch(`${relayUrl()}/__dev/mail?to=${encodeURIComponent(email)}`, { headers: { "cf-connecting-ip": fakeIp() } });
  return ((await res.json()) as { messages: Array<{ subject: string; text: string }> }).messages;
}

afterAll(() => {
  cleanupTempHomes();
});

describe("service apps transfer", () => {
  // One agent for the file: each test deploys an app of its own and offers only that app.
  let me: CliAgent;
  beforeAll(async () => {
    me = await claimedCliAgent("cli-transfer-test");
  });

  it("offer, show and cancel: plain text by default, the relay's answer with --json", async () => {
    const app = await deployApp(me);
    const to = uniqueEmail("transfer-to");

    expect(ok(await me.cli(["apps", "transfer", app.slug, "--show"])).stdout.trim()).toBe(`No transfer of ${app.slug} is pending.`);

    const offered = ok(await me.cli(["apps", "transfer", app.slug, "--to", to]));
    expect(offered.stderr).toBe("");
    expect(offered.stdout).toContain(`Offered ${app.slug} to ${to}.`);
    expect(offered.stdout).toContain("You stay on the app as a member afterwards.");
    expect(offered.stdout).toContain(`service apps transfer ${app.slug} --cancel`);
    const mails = await outbox(to);
    expect(mails).toHaveLength(1);
    expect(mails[0].text).toContain("/transfer?token=trf_");

    const shown = JSON.parse(ok(await me.cli(["apps", "transfer", app.app_id, "--show", "--json"])).stdout) as { transfer: Obj };
    expect(shown.transfer).toMatchObject({ app_id: app.app_id, status: "pending", to_email: to, keep_as_member: true, resolved_at: null });
    expect(ok(await me.cli(["apps", "transfer", app.slug, "--show"])).stdout).toContain(`${app.slug} is offered to ${to}`);

    // One pending offer per app: a second is the relay's 409, printed as the CLI's error.
    failed(await me.cli(["apps", "transfer", app.slug, "--to", uniqueEmail("transfer-other")]), "conflict");

    const cancelled = JSON.parse(ok(await me.cli(["apps", "transfer", app.slug, "--cancel", "--json"])).stdout) as { transfer: Obj };
    expect(cancelled.transfer).toMatchObject({ id: shown.transfer.id, status: "withdrawn", to_email: to });
    expect(JSON.parse(ok(await me.cli(["apps", "transfer", app.slug, "--show", "--json"])).stdout)).toEqual({ transfer: null });
    failed(await me.cli(["apps", "transfer", app.slug, "--cancel"]), "not_found");

    const removing = JSON.parse(ok(await me.cli(["apps", "transfer", app.slug, "--to", to, "--remove-me", "--json"])).stdout) as { transfer: Obj };
    expect(removing.transfer).toMatchObject({ status: "pending", to_email: to, keep_as_member: false });
    expect(ok(await me.cli(["apps", "transfer", app.slug, "--show"])).stdout).toContain("You will no longer be on the app afterwards.");
    expect(ok(await me.cli(["apps", "transfer", app.slug, "--cancel"])).stdout.trim())
      .toBe(`Withdrew the offer of ${app.slug} to ${to}; its link no longer works. You still own the app.`);

    const kept = JSON.parse(ok(await me.cli(["apps", "transfer", app.slug, "--to", to, "--keep-as-member", "--json"])).stdout) as { transfer: Obj };
    expect(kept.transfer.keep_as_member).toBe(true);
    ok(await me.cli(["apps", "transfer", app.slug, "--cancel"]));
  });

  it("local argv errors never reach the relay; an unknown app or address is the relay's refusal", async () => {
    const app = await deployApp(me);
    const to = uniqueEmail("transfer-argv");
    for (const args of [[], ["--show", "--cancel"], ["--to", to, "--show"], ["--to", to, "--remove-me", "--keep-as-member"], ["--remove-me"], ["--keep-as-member", "--show"]]) {
      failed(await me.cli(["apps", "transfer", app.slug, ...args]), "invalid_args");
    }
    failed(await me.cli(["apps", "transfer", "--show"]), "invalid_args");
    expect(await outbox(to)).toEqual([]);
    expect(JSON.parse(ok(await me.cli(["apps", "transfer", app.slug, "--show", "--json"])).stdout)).toEqual({ transfer: null });
    failed(await me.cli(["apps", "transfer", app.slug, "--to", "not-an-address"]), "invalid_request");
    failed(await me.cli(["apps", "transfer", "no-such-app-here", "--show"]), "app_not_found");
  });
});
