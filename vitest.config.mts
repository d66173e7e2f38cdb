// Three test projects: "worker" runs inside workerd with real D1, DO, R2 and Queues
// (vitest Workers pool), "worker-isolated" the same for files that need storage of their
// own; "node" runs the real CLI and real Chromium against a relay that the global setup
// starts with `wrangler dev` on a free local port.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const migrations = await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url)));

/** The workerd pool's setup, shared by the two worker projects. */
const workerPool = {
  main: "./workers/relay.ts",
  wrangler: { configPath: "./wrangler.toml" },
  miniflare: {
    bindings: {
      TEST_MIGRATIONS: migrations,
      RELAY_ENV: "development",
      API_ORIGIN: "http://localhost:8787",
      APPS_DOMAIN: "localhost:8787",
      REGISTRATION_MODE: "open",
      MIN_CLI_VERSION: "0.1.0",
      // Development mode turns the per-IP limiter off unless a bucket is set
      // (CONTRACT §3); the worker tests run with every bucket at its production
      // default, set explicitly, and each test calls from an address of its own.
      RATE_LIMIT_WINDOW_SECONDS: "60",
      RATE_LIMIT_REGISTER: "10",
      RATE_LIMIT_DEVICE_CODE: "10",
      RATE_LIMIT_DEVICE_TOKEN: "60",
      RATE_LIMIT_REQUEST_LINK: "5",
      RATE_LIMIT_CLAIM: "10",
      RATE_LIMIT_INVITE: "20",
      RATE_LIMIT_PAGE_WRITE: "60",
    },
  },
};

const WORKER_TESTS = ["test/worker/**/*.test.ts", "test/unit/**/*.test.ts", "durable-objects/**/*.test.ts"];
/** Worker tests that must not share storage with the rest (see the "worker-isolated" project). */
const ISOLATED_WORKER_TESTS = ["test/worker/dev/dev-endpoints.test.ts"];

export default defineConfig({
  test: {
    // Two runners on a 2-core machine: one slot left the second core idle while the worker
    // project held it (the node project starts only after it). Each worker runner keeps a
    // storage of its own, so the two never share a table.
    maxWorkers: 2,
    projects: [
      {
        plugins: [cloudflareTest(workerPool)],
        test: {
          name: "worker",
          include: WORKER_TESTS,
          exclude: [...ISOLATED_WORKER_TESTS],
          setupFiles: ["./test/worker/setup.ts"],
          // A webhook receiver and a fake OpenID issuer on 127.0.0.1 that the tests reach from inside workerd.
          globalSetup: ["./test/support/webhook-receiver-setup.ts", "./test/support/fake-oidc-issuer-setup.ts"],
          // One module graph and one storage for every file a runner takes: loading the
          // Worker anew for each file cost about five seconds a file. Tests make their own
          // accounts and apps and never assume a table is empty.
          isolate: false,
          // Two runners share the cores: a test waits on conditions, so a longer limit only
          // matters when something is slow, never when it works.
          testTimeout: 20_000,
        },
      },
      {
        plugins: [cloudflareTest(workerPool)],
        test: {
          name: "worker-isolated",
          // Files that move the clock for every sweep (`POST /__dev/cron` with `{ now }` days
          // ahead expires sessions and purges trash everywhere) get a storage of their own,
          // so they cannot pull the ground from under the files that share one.
          include: [...ISOLATED_WORKER_TESTS],
          setupFiles: ["./test/worker/setup.ts"],
          globalSetup: ["./test/support/webhook-receiver-setup.ts", "./test/support/fake-oidc-issuer-setup.ts"],
        },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/cli/**/*.test.ts", "test/browser/**/*.test.ts", "test/docs/**/*.test.ts", "test/reliability/**/*.test.ts", "test/structure/**/*.test.ts"],
          // The CLI bundle first (bin/service runs dist/cli/service.mjs), then the relay.
          globalSetup: ["./test/support/cli-bundle-setup.ts", "./test/support/relay-global-setup.ts"],
          // Real processes and real time, and no retry: a test that waits polls for what it
          // waits for (test/support/wait.ts), so a failure is a failure.
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
