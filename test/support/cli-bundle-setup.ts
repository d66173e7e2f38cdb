// Builds dist/cli/service.mjs, the bundle bin/service runs, when it is missing or older
// than a source it was built from, once before the node project's tests: otherwise the
// first CLI processes of a run would each rebuild it at the same time.
// test/docs/cli-bundle-fresh.test.ts then checks that what is on disk is a fresh build.
// @ts-expect-error plain ESM build script
import { ensureCliBundle } from "../../scripts/build-cli.mjs";

export default async function setup() {
  await ensureCliBundle();
}
