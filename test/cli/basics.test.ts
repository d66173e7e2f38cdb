// The CLI's local behaviour, run as a real process: help for every noun and verb,
// version, argv errors, the config file (mode 0600, masked keys), the precedence of
// flags, environment and profiles, and the error paths that need no account
// (fetch_error, non_json_response, 5xx report, 426 upgrade).
import { readFileSync, statSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, NOUNS } from "../../src/cli/commands/registry.ts";
import { cleanupTempHomes, closedPort, configDir, relayUrl, root, runCli, tempHome, type CliRun } from "./helpers.ts";

const pkgVersion = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }).version;
const KEY_A = "svc_0123456789abcdef0123456789abcdef";
const KEY_B = "svc_fedcba9876543210fedcba9876543210";

afterEach(() => cleanupTempHomes());

describe("help and version", () => {
  it("prints the bare version for -v and --version", async () => {
    const home = tempHome();
    for (const flag of ["-v", "--version"]) {
      const run = await runCli(home, [flag]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`${pkgVersion}\n`);
    }
  });

  // One process per noun and verb (some fifty): one test per noun, and a noun's verbs a
  // few at a time, so the whole fits a test's time on a slow machine.
  it("answers --help for the program without running anything", async () => {
    const home = tempHome();
    const top = await runCli(home, ["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain("Usage: service <noun> <verb>");
    for (const noun of NOUNS) expect(top.stdout).toContain(noun.name);
    // Nothing was written: help never performs the action.
    expect(existsSync(configDir(home))).toBe(false);
  });

  it.each(NOUNS.map((noun) => [noun.name, noun] as const))("answers --help for %s and every one of its verbs without running anything", async (_name, noun) => {
    const home = tempHome();
    const nounHelp = await runCli(home, [noun.name, "--help"]);
    expect(nounHelp.code, nounHelp.stderr).toBe(0);
    expect(nounHelp.stdout).toContain(`Usage: service ${noun.name} <verb>`);
    for (const verb of noun.verbs) expect(nounHelp.stdout).toContain(verb.verb);
    const verbs = [...noun.verbs];
    const runs = await Promise.all(Array.from({ length: 3 }, async () => {
      const done: Array<[typeof verbs[number], CliRun]> = [];
      for (let verb = verbs.shift(); verb; verb = verbs.shift()) done.push([verb, await runCli(home, [noun.name, verb.verb, "-h"])]);
      return done;
    }));
    for (const [verb, run] of runs.flat()) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`Usage: service ${noun.name} ${verb.verb}`);
      for (const flag of verb.flags) expect(run.stdout).toContain(`--${flag.name}`);
      expect(run.stderr).toBe("");
    }
    expect(runs.flat()).toHaveLength(noun.verbs.length);
    // Nothing was written: help never performs the action.
    expect(existsSync(configDir(home))).toBe(false);
  });

  it("help wins over the action, even with action flags and bad flags present", async () => {
    const home = tempHome();
    await runCli(home, ["config", "add", "keep", "--url", "http://localhost:1234", "--api-key", KEY_A]);
    const logout = await runCli(home, ["agent", "logout", "--all", "--help"]);
    expect(logout.code).toBe(0);
    expect(logout.stdout).toContain("Usage: service agent logout");
    const revoke = await runCli(home, ["key", "revoke", "--yes", "--bogus", "--help"]);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain("Usage: service key revoke");
    const list = await runCli(home, ["config", "list"]);
    expect(list.json<{ profiles: unknown[] }>().profiles).toHaveLength(1);
  });
});

describe("argv errors", () => {
  it("rejects an unknown noun and an unknown verb with unknown_command", async () => {
    const home = tempHome();
    for (const args of [["frobnicate"], ["agent", "dance"], ["agent"]]) {
      const run = await runCli(home, args);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      const error = run.error();
      expect(error.code).toBe("unknown_command");
      expect(error.hint).toContain("--help");
    }
    // An unknown first word lists every command that exists, the verb-less ones included.
    const message = (await runCli(home, ["frobnicate"])).error().message;
    const words = [...COMMANDS.map((command) => command.noun), ...NOUNS.map((noun) => noun.name)];
    expect(words.slice(0, 2)).toEqual(["deploy", "data"]);
    expect(message).toBe(`Unknown command "frobnicate"; the commands are ${words.join(", ")}.`);
  });

  it("members list --help says which of customRoles and customRole is which", async () => {
    const help = (await runCli(tempHome(), ["members", "list", "--help"])).stdout;
    expect(help).toContain("customRoles holds every custom role the member has; customRole is the older");
    expect(help).toContain("single-role view, the first of customRoles or null.");
  });

  it("rejects unknown flags per verb with invalid_args and a hint naming --help", async () => {
    const home = tempHome();
    const run = await runCli(home, ["key", "list", "--yes"]);
    expect(run.code).toBe(1);
    const error = run.error();
    expect(error.code).toBe("invalid_args");
    expect(error.message).toContain("--yes");
    expect(error.hint).toContain("service key list --help");
    const short = await runCli(home, ["config", "show", "-x"]);
    expect(short.error().code).toBe("invalid_args");
  });

  it("rejects a repeated flag, a missing value, a value on a boolean and extra arguments", async () => {
    const home = tempHome();
    const cases = [
      ["config", "show", "--url", "http://localhost:1", "--url=http://localhost:2"],
      ["config", "show", "--profile"],
      ["key", "revoke", "--yes=true"],
      ["config", "use", "a", "b"],
      ["config", "use"],
    ];
    for (const args of cases) {
      const run = await runCli(home, args);
      expect(run.code, args.join(" ")).toBe(1);
      const error = run.error();
      expect(error.code).toBe("invalid_args");
      expect(error.hint).toMatch(/--help/);
    }
  });

  it("accepts --flag=value, --flag value and the no-op --json", async () => {
    const home = tempHome();
    const a = await runCli(home, ["config", "show", "--url=http://localhost:4100", "--json"]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.json()).toMatchObject({ url: "http://localhost:4100", url_source: "flag" });
    const b = await runCli(home, ["--url", "http://localhost:4101/", "config", "show"]);
    expect(b.json()).toMatchObject({ url: "http://localhost:4101", url_source: "flag" });
  });

  it("refuses key revoke without --yes with confirmation_required", async () => {
    const home = tempHome();
    const run = await runCli(home, ["key", "revoke"], { env: { SERVICE_API_KEY: KEY_A } });
    expect(run.code).toBe(1);
    expect(run.error().code).toBe("confirmation_required");
  });
});

describe("config and profiles", () => {
  it("writes config.json with mode 0600 in a 0700 directory and never prints the full key", async () => {
    const home = tempHome();
    const set = await runCli(home, ["agent", "set-key", "-", "--url", "http://localhost:4200"], { stdin: `${KEY_A}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe("");
    const file = path.join(configDir(home), "config.json");
    expect(set.json()).toEqual({ saved_to: file, profile: "default", key_prefix: KEY_A.slice(0, 10) });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(configDir(home)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      current_profile: "default",
      profiles: { default: { url: "http://localhost:4200", api_key: KEY_A } },
    });

    const show = await runCli(home, ["config", "show"]);
    expect(show.json()).toEqual({
      url: "http://localhost:4200", url_source: "profile",
      key_prefix: `${KEY_A.slice(0, 10)}…`, key_source: "profile",
      profile: "default", profile_source: "store", config_path: file,
    });
    const list = await runCli(home, ["config", "list"]);
    expect(list.json()).toEqual({
      current: "default",
      profiles: [{ name: "default", url: "http://localhost:4200", key_prefix: `${KEY_A.slice(0, 10)}…`, current: true }],
      config_path: file,
    });
    for (const run of [set, show, list]) expect(run.stdout + run.stderr).not.toContain(KEY_A);
  });

  it("warns when a key is given literally on the command line", async () => {
    const home = tempHome();
    const run = await runCli(home, ["agent", "set-key", KEY_A]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^warning: /);
    expect(run.stdout).not.toContain(KEY_A);
  });

  it("applies flag > env > profile for URL, key and profile", async () => {
    const home = tempHome();
    await runCli(home, ["config", "add", "one", "--url", "http://localhost:4301", "--api-key", KEY_A]);
    await runCli(home, ["config", "add", "two", "--url", "http://localhost:4302", "--api-key", KEY_B]);

    const nothing = await runCli(tempHome(), ["config", "show"]);
    expect(nothing.json()).toMatchObject({
      url: "http://localhost:8787", url_source: "none", key_prefix: null, key_source: "none", profile: "default", profile_source: "none",
    });

    const stored = await runCli(home, ["config", "show"]);
    expect(stored.json()).toMatchObject({ url: "http://localhost:4301", url_source: "profile", profile: "one", profile_source: "store", key_source: "profile" });

    const env = { SERVICE_PROFILE: "two" };
    const byEnv = await runCli(home, ["config", "show"], { env });
    expect(byEnv.json()).toMatchObject({ url: "http://localhost:4302", profile: "two", profile_source: "env", key_prefix: `${KEY_B.slice(0, 10)}…` });

    const byFlag = await runCli(home, ["config", "show", "--profile", "one"], { env });
    expect(byFlag.json()).toMatchObject({ url: "http://localhost:4301", profile: "one", profile_source: "flag" });

    const urlEnv = { SERVICE_URL: "http://localhost:4400", SERVICE_API_KEY: "svc_fromenvfromenvfromenvfromenv00" };
    const envWins = await runCli(home, ["config", "show"], { env: urlEnv });
    expect(envWins.json()).toMatchObject({ url: "http://localhost:4400", url_source: "env", key_source: "env", key_prefix: "svc_fromen…" });

    const flagWins = await runCli(home, ["config", "show", "--url", "http://localhost:4500", "--api-key", KEY_B], { env: urlEnv });
    expect(flagWins.json()).toMatchObject({ url: "http://localhost:4500", url_source: "flag", key_source: "flag", key_prefix: `${KEY_B.slice(0, 10)}…` });

    const unknown = await runCli(home, ["config", "show", "--profile", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.error().code).toBe("config_error");
    const unknownEnv = await runCli(home, ["config", "show"], { env: { SERVICE_PROFILE: "nope" } });
    expect(unknownEnv.error().code).toBe("config_error");
    const badName = await runCli(home, ["config", "show", "--profile", "has space"]);
    expect(badName.error().code).toBe("invalid_args");
  });

  it("adds, uses, removes and clears profiles", async () => {
    const home = tempHome();
    const file = path.join(configDir(home), "config.json");
    expect((await runCli(home, ["config", "add", "a", "--url", "http://localhost:4601"])).json()).toEqual({ profile: "a", saved_to: file });
    await runCli(home, ["config", "add", "b", "--url", "http://localhost:4602", "--api-key", "-"], { stdin: KEY_B });
    const listed = (await runCli(home, ["config", "list"])).json<{ current: string; profiles: Array<{ name: string; key_prefix: string | null; current: boolean }> }>();
    expect(listed.current).toBe("a");
    expect(listed.profiles.map((p) => [p.name, p.key_prefix, p.current])).toEqual([["a", null, true], ["b", `${KEY_B.slice(0, 10)}…`, false]]);

    expect((await runCli(home, ["config", "use", "b"])).json()).toEqual({ profile: "b", saved_to: file });
    expect((await runCli(home, ["config", "use", "zzz"])).error().code).toBe("config_error");
    expect((await runCli(home, ["config", "rm", "b"])).json()).toEqual({ profile: "b", was_current: true, path: file });
    expect((await runCli(home, ["config", "rm", "b"])).error().code).toBe("config_error");

    await runCli(home, ["config", "add", "c", "--url", "http://localhost:4603", "--api-key", KEY_A]);
    expect((await runCli(home, ["agent", "logout", "--profile", "c"])).json()).toEqual({ cleared: true, profile: "c", path: file });
    expect((await runCli(home, ["agent", "logout", "--all"])).json()).toEqual({ cleared: true, profile: null, path: file });
    expect((await runCli(home, ["config", "list"])).json()).toEqual({ current: null, profiles: [], config_path: file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("reports a corrupt config file as config_error", async () => {
    const home = tempHome();
    mkdirSync(configDir(home), { recursive: true });
    writeFileSync(path.join(configDir(home), "config.json"), "{ not json");
    const run = await runCli(home, ["config", "list"]);
    expect(run.code).toBe(1);
    expect(run.error().code).toBe("config_error");
  });

  it("fails locally with config_error when a command needs a key and none is set", async () => {
    const run = await runCli(tempHome(), ["key", "list", "--url", relayUrl()]);
    expect(run.code).toBe(1);
    expect(run.error().code).toBe("config_error");
  });
});

describe("transport errors", () => {
  let server: Server;
  let serverUrl: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html><body>not a relay</body></html>");
      } else {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "internal_error", message: "boom", hint: "h", retryable: false, docs_url: "http://localhost/docs/errors#internal_error" } }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("reports fetch_error when nothing listens", async () => {
    const port = await closedPort();
    const run = await runCli(tempHome(), ["key", "list", "--url", `http://127.0.0.1:${port}`, "--api-key", KEY_A]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.error()).toMatchObject({ code: "fetch_error" });
  });

  it("reports non_json_response with a snippet of the body", async () => {
    const run = await runCli(tempHome(), ["key", "list", "--url", serverUrl, "--api-key", KEY_A]);
    expect(run.code).toBe(1);
    const error = run.error();
    expect(error.code).toBe("non_json_response");
    expect(error.details).toMatchObject({ body: "<html><body>not a relay</body></html>" });
  });

  it("passes a 5xx envelope through and adds the report sentence", async () => {
    const run = await runCli(tempHome(), ["key", "mint", "--url", serverUrl, "--api-key", KEY_A]);
    expect(run.code).toBe(1);
    expect(run.error()).toMatchObject({
      code: "internal_error", message: "boom", hint: "h", retryable: false, docs_url: "http://localhost/docs/errors#internal_error",
      report: expect.stringContaining("feedback"),
    });
  });
});

describe("version skew", () => {
  it("exits 75 with exactly two lines when the relay needs a newer CLI", async () => {
    const run = await runCli(tempHome(), ["agent", "register", "--no-device", "--url", relayUrl()], {
      env: { SERVICE_CLI_VERSION_OVERRIDE: "0.0.1" },
    });
    expect(run.code).toBe(75);
    expect(run.stdout).toBe("");
    const lines = run.stderr.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(lines[0]).toBe("service: this relay requires service-relay-cli >= 0.1.0 (you have 0.0.1).");
    expect(lines[1]).toMatch(/^(To upgrade: |Install method: )/);
  });
});
