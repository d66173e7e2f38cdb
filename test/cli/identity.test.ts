// The CLI against the real test relay: direct registration and the key verbs (list,
// mint, revoke, then invalid_api_key), claiming with a code a human minted, the device
// flow in one go and split with --start/--resume (approved, not yet, denied), and the
// skill document with its version check.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupTempHomes, configDir, decideDevice, mintClaimCode, relayUrl, runCli, signIn, tempHome } from "./helpers.ts";

afterEach(() => cleanupTempHomes());

interface Registered {
  agent_id: string;
  key_prefix: string;
  profile: string;
  saved_to: string;
  registered_via: "device" | "direct";
  api_key?: string;
}

function savedKey(home: string, profile = "default"): string {
  const config = JSON.parse(readFileSync(path.join(configDir(home), "config.json"), "utf8")) as { profiles: Record<string, { api_key: string }> };
  return config.profiles[profile].api_key;
}

describe("direct registration and keys", () => {
  it("registers with --no-device, lists, mints and revokes the key; the revoked key then fails", async () => {
    const home = tempHome();
    const url = relayUrl();
    const reg = await runCli(home, ["agent", "register", "--no-device", "--name", "cli-test-direct", "--url", url]);
    expect(reg.code, reg.stderr).toBe(0);
    const body = reg.json<Registered>();
    expect(body).toEqual({
      agent_id: expect.any(String), key_prefix: expect.stringMatching(/^svc_/), profile: "default",
      saved_to: path.join(configDir(home), "config.json"), registered_via: "direct",
    });
    const key = savedKey(home);
    expect(key.startsWith(body.key_prefix)).toBe(true);
    expect(reg.stdout + reg.stderr).not.toContain(key);
    expect(statSync(body.saved_to).mode & 0o777).toBe(0o600);

    const list = await runCli(home, ["key", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json()).toEqual({
      agent_id: body.agent_id, name: "cli-test-direct", key_prefix: body.key_prefix,
      created_at: expect.any(String), last_used_at: expect.anything(), revoked_at: null,
    });

    const mint = await runCli(home, ["key", "mint"]);
    expect(mint.code, mint.stderr).toBe(0);
    const minted = mint.json<{ agent_id: string; api_key: string; key_prefix: string }>();
    expect(minted).toMatchObject({ agent_id: body.agent_id, api_key: expect.stringMatching(/^svc_/), name: "cli-test-direct" });
    expect(savedKey(home)).toBe(key); // mint saves nothing

    const revoke = await runCli(home, ["key", "revoke", "--yes"]);
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.json()).toEqual({ revoked: true, agent_id: body.agent_id });

    const after = await runCli(home, ["key", "list"]);
    expect(after.code).toBe(1);
    const error = after.error();
    expect(error).toMatchObject({ code: "invalid_api_key", message: expect.any(String), hint: expect.any(String), retryable: false });
    expect(error.docs_url).toContain("#invalid_api_key");

    // The sibling key is a separate key and still works.
    const sibling = await runCli(home, ["key", "list", "--api-key", minted.api_key]);
    expect(sibling.code, sibling.stderr).toBe(0);
    expect(sibling.json()).toMatchObject({ agent_id: body.agent_id, key_prefix: minted.key_prefix });
  });

  it("prints the full key only with --print-key, and saves to the chosen profile", async () => {
    const home = tempHome();
    const reg = await runCli(home, ["agent", "register", "--no-device", "--print-key", "--profile", "printed", "--url", relayUrl()]);
    expect(reg.code, reg.stderr).toBe(0);
    const body = reg.json<Registered>();
    expect(body.profile).toBe("printed");
    expect(body.api_key).toBe(savedKey(home, "printed"));
    expect((await runCli(home, ["config", "show"])).json()).toMatchObject({ profile: "printed", profile_source: "store", url: relayUrl() });
  });

  it("says on stderr when a new registration switches the current profile, and not otherwise", async () => {
    const home = tempHome();
    const first = await runCli(home, ["agent", "register", "--no-device", "--profile", "work", "--url", relayUrl()]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe("");
    const again = await runCli(home, ["agent", "register", "--no-device", "--profile", "work", "--url", relayUrl()]);
    expect(again.stderr).not.toContain("current profile");
    const second = await runCli(home, ["agent", "register", "--no-device", "--profile", "play", "--url", relayUrl()]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe('warning: the current profile is now "play" (it was "work"); switch back with `service config use work`.\n');
    expect((await runCli(home, ["config", "show"])).json()).toMatchObject({ profile: "play" });
  });
});

describe("claiming", () => {
  it("claims with a code minted by a human, then refuses a second claim", async () => {
    const home = tempHome();
    const reg = await runCli(home, ["agent", "register", "--no-device", "--url", relayUrl()]);
    expect(reg.code, reg.stderr).toBe(0);
    const human = await signIn();

    const claimed = await runCli(home, ["agent", "claim", await mintClaimCode(human)]);
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(claimed.json()).toEqual({ ok: true, owner_human_id: expect.any(String), claimed_at: expect.any(String) });

    const again = await runCli(home, ["agent", "claim", await mintClaimCode(human)]);
    expect(again.code).toBe(1);
    expect(again.error()).toMatchObject({ code: "agent_already_claimed", retryable: false });
  });

  it("passes the relay's error through for an unknown claim code", async () => {
    const home = tempHome();
    const reg = await runCli(home, ["agent", "register", "--no-device", "--url", relayUrl()]);
    expect(reg.code, reg.stderr).toBe(0);
    const run = await runCli(home, ["agent", "claim", "cc_doesnotexist"]);
    expect(run.code).toBe(1);
    expect(run.error()).toMatchObject({ code: "claim_code_invalid", hint: expect.any(String), docs_url: expect.any(String) });
  });
});

describe("device flow", () => {
  it("splits registration with --start and --resume: not yet, then approved and saved", async () => {
    const home = tempHome();
    const url = relayUrl();
    const started = await runCli(home, ["agent", "register", "--start", "--name", "cli-test-split", "--profile", "split", "--url", url]);
    expect(started.code, started.stderr).toBe(0);
    const pendingPath = path.join(configDir(home), "pending-device.json");
    const start = started.json<Record<string, unknown>>();
    expect(start).toEqual({
      state: "pending_approval", verification_uri_complete: expect.stringContaining(`${url}/device?code=`),
      user_code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/), expires_in: expect.any(Number), expires_at: expect.any(String),
      name: "cli-test-split", profile: "split", pending_saved_to: pendingPath, next: expect.stringContaining("--resume"),
    });
    expect(statSync(pendingPath).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(pendingPath, "utf8"))).toEqual({
      device_code: expect.any(String), user_code: start.user_code, verification_uri_complete: start.verification_uri_complete,
      url, name: "cli-test-split", profile: "split", expires_at: start.expires_at,
    });

    const early = await runCli(home, ["agent", "register", "--resume"]);
    expect(early.code).toBe(1);
    expect(early.error()).toMatchObject({ code: "not_approved_yet", retryable: true });
    expect(existsSync(pendingPath)).toBe(true);

    const otherUrl = await runCli(home, ["agent", "register", "--resume", "--url", "http://localhost:1"]);
    expect(otherUrl.error().code).toBe("invalid_args");

    await decideDevice(await signIn(), start.user_code as string, "approve");
    const resumed = await runCli(home, ["agent", "register", "--resume"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json()).toEqual({
      agent_id: expect.any(String), key_prefix: expect.stringMatching(/^svc_/), profile: "split",
      saved_to: path.join(configDir(home), "config.json"), registered_via: "device",
    });
    expect(existsSync(pendingPath)).toBe(false);

    // A device-flow agent belongs to its approver at birth.
    const list = await runCli(home, ["key", "list"]);
    expect(list.json()).toMatchObject({ name: "cli-test-split" });

    const nothing = await runCli(home, ["agent", "register", "--resume"]);
    expect(nothing.error().code).toBe("no_pending_registration");
  });

  it("reports device_flow_denied when the human denies a parked request, and forgets it", async () => {
    const home = tempHome();
    const started = await runCli(home, ["agent", "register", "--start", "--url", relayUrl()]);
    expect(started.code, started.stderr).toBe(0);
    await decideDevice(await signIn(), started.json<{ user_code: string }>().user_code, "deny");
    const resumed = await runCli(home, ["agent", "register", "--resume"]);
    expect(resumed.code).toBe(1);
    expect(resumed.error().code).toBe("device_flow_denied");
    expect(existsSync(path.join(configDir(home), "pending-device.json"))).toBe(false);
  });

  it("reports device_flow_expired for an expired parked request", async () => {
    const home = tempHome();
    const started = await runCli(home, ["agent", "register", "--start", "--url", relayUrl()]);
    expect(started.code, started.stderr).toBe(0);
    const pendingPath = path.join(configDir(home), "pending-device.json");
    const pending = JSON.parse(readFileSync(pendingPath, "utf8"));
    writeFileSync(pendingPath, JSON.stringify({ ...pending, expires_at: new Date(Date.now() - 1000).toISOString() }));
    const resumed = await runCli(home, ["agent", "register", "--resume"]);
    expect(resumed.error().code).toBe("device_flow_expired");
    expect(existsSync(pendingPath)).toBe(false);
  });

  it("registers in one go: instructions on stderr, polls until a human approves, agent already claimed", async () => {
    const home = tempHome();
    const human = await signIn();
    let approving: Promise<void> | undefined;
    const run = await runCli(home, ["agent", "register", "--name", "cli-test-device", "--url", relayUrl()], {
      timeoutMs: 45_000,
      onStderr: (soFar) => {
        const code = /code ([A-Z]{4}-[A-Z]{4})/.exec(soFar)?.[1];
        if (code && !approving) approving = decideDevice(human, code, "approve");
      },
    });
    await approving;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`${relayUrl()}/device?code=`);
    expect(run.json()).toMatchObject({ registered_via: "device", profile: "default" });
    const claim = await runCli(home, ["agent", "claim", await mintClaimCode(human)]);
    expect(claim.error().code).toBe("agent_already_claimed");
  });
});

describe("skill document", () => {
  it("prints the raw markdown and the version, and warns when the relay's guide is newer than the copy read", async () => {
    const home = tempHome();
    const url = relayUrl();
    const show = await runCli(home, ["skill", "show", "--url", url]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^<!-- service skill v\d+\.\d+\.\d+ -->\n/);
    expect(show.stdout).toContain("service agent register");

    const version = await runCli(home, ["skill", "version", "--url", url]);
    expect(version.code).toBe(0);
    const current = version.json<{ version: string }>().version;
    expect(show.stdout.startsWith(`<!-- service skill v${current} -->`)).toBe(true);
    expect(version.stderr).toBe("");

    const plain = await runCli(home, ["skill", "version", "--plain", "--url", url]);
    expect(plain.stdout).toBe(`${current}\n`);

    // Pretend the copy we read is older: `skill version` warns at once.
    const cachePath = path.join(configDir(home), "skill-version.json");
    const cache = JSON.parse(readFileSync(cachePath, "utf8"));
    expect(cache.relays[url].version).toBe(current);
    const stale = { relays: { [url]: { ...cache.relays[url], version: "0.0.1" } } };
    writeFileSync(cachePath, JSON.stringify(stale));
    const warned = await runCli(home, ["skill", "version", "--url", url]);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/^warning: .*service skill show/);

    // Other commands check at most once a day: a fresh check stays quiet, a day-old one warns.
    const reg = await runCli(home, ["agent", "register", "--no-device", "--url", url]);
    expect(reg.code, reg.stderr).toBe(0);
    expect(reg.stderr).toBe("");
    writeFileSync(cachePath, JSON.stringify({ relays: { [url]: { ...stale.relays[url], checked_at: new Date(Date.now() - 25 * 3600_000).toISOString() } } }));
    const listed = await runCli(home, ["key", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toMatch(/^warning: .*service skill show/);
    const again = await runCli(home, ["key", "list"]);
    expect(again.stderr).toBe("");

    // Reading the guide again clears the warning.
    await runCli(home, ["skill", "show", "--url", url]);
    expect((await runCli(home, ["skill", "version", "--url", url])).stderr).toBe("");
  });
});
