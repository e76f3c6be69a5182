/**
 * `npm run build` (into dist/) and `npm start`'s bundle (into node_modules/.cache/pf-platform, through deploy/fresh.mjs
 * when an input changed): every entry point production runs, bundled once, so plain `node` runs them with only the
 * production dependencies installed (docs/deployment.md, "The build"). Usage: tsx deploy/build.ts <folder>.
 */
import { cp, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { assembleFunctions } from "../agent/catalogue/catalogue.js";

/** The repository, which the entries and the agent's files are relative to. */
const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Output name → source. The worker threads' modules are entries of their own, started from beside the bundle that
 * runs them (kit `moduleWorker`): the rendering worker beside main.js, the function sandbox's beside agent.js (which
 * `npm start`'s embedded agent runs too).
 */
export const ENTRIES = {
  main: "platform/main.ts",
  "render-worker": "services/kit/rich-text/render-worker.ts",
  "wasi-worker": "agent/sandbox/wasi-worker.ts",
  token: "services/kit/auth/token-cli.ts",
  agent: "agent/main.ts",
} as const;

/**
 * What the agent reads beside its bundle at run time (catalogue.ts): its code scripts as they are (`code/*.sh`), and
 * its function modules assembled here from their WAT (`function/*.wasm`), so a bundled agent never loads the assembler.
 */
const AGENT_SCRIPTS = "agent/catalogue/code";
const AGENT_FUNCTIONS = "agent/catalogue/function";

/** Bundles into a folder of its own, then moves the files in: a start running at the same time never reads half a file. */
export async function bundle(out: string): Promise<void> {
  const staging = `${out}.build-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: staging,
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    target: "node20",
    logLevel: "warning",
  });
  await cp(join(ROOT, AGENT_SCRIPTS), join(staging, "code"), { recursive: true });
  await mkdir(join(staging, "function"));
  for (const [name, bytes] of await assembleFunctions(join(ROOT, AGENT_FUNCTIONS)))
    await writeFile(join(staging, "function", `${name}.wasm`), bytes);
  await mkdir(out, { recursive: true });
  for (const name of Object.keys(ENTRIES)) await rename(join(staging, `${name}.js`), join(out, `${name}.js`));
  for (const name of ["function", "code"]) {
    await rm(join(out, name), { recursive: true, force: true });
    // A build running at the same time may have put the same files there first.
    await rename(join(staging, name), join(out, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
  }
  await rm(staging, { recursive: true, force: true });
}

if (process.argv[1]?.endsWith("build.ts")) {
  const out = process.argv[2];
  if (!out) throw new Error("usage: tsx deploy/build.ts <folder>");
  await bundle(out);
}
