import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTRIES } from "../../deploy/build.js";
import { loadKeys } from "../../services/kit/auth/keys.js";
import { mintToken } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { freePorts } from "../support/ports.js";
import { until } from "../support/until.js";
import { ROOT, startInImage, type ImageProcess } from "./image.js";

/**
 * `npm run build`: every entry production runs, bundled once, importing only Node's modules and production
 * dependencies, so the image runs plain node without a compiler; `npm start` still works after a plain `npm ci`,
 * rebuilds its bundle only when a source changed, and runs its embedded agent from the bundle.
 */

const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const BUILD_TOOLS = ["esbuild", "tsx", "typescript"];

/** The package an import specifier names (`@scope/name/deep` → `@scope/name`). */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

describe("npm run build", () => {
  // Where `npm start` keeps its own, so the bundle's packages resolve from the repository's node_modules.
  let out = "";
  /** `npm start`'s prestart into `out`. */
  const prestart = () => promisify(execFile)(process.execPath, ["deploy/fresh.mjs", out], { cwd: ROOT });
  /** When the platform's bundle was last written. */
  const made = async () => (await stat(join(out, "main.js"))).mtimeMs;

  beforeAll(async () => {
    await mkdir(join(ROOT, "node_modules/.cache"), { recursive: true });
    out = await mkdtemp(join(ROOT, "node_modules/.cache/pf-build-test-"));
    await prestart();
  }, 60_000);

  afterAll(() => rm(out, { recursive: true, force: true }));

  it("bundles the platform, its render worker, the token command and the agent", async () => {
    const files = await readdir(out);
    for (const name of Object.keys(ENTRIES)) expect(files).toContain(`${name}.js`);
    // The agent's catalogue, read beside its bundle: its modules assembled by the build.
    expect((await readdir(join(out, "function"))).sort()).toEqual(
      ["echo", "hog", "printer", "sleep", "sum"].map((name) => `${name}.wasm`),
    );
    expect(await readdir(join(out, "code"))).toContain("echo.sh");
  });

  it("imports nothing but Node's modules and production dependencies: no build tool", async () => {
    let packages = 0;
    for (const name of Object.keys(ENTRIES)) {
      const code = await readFile(join(out, `${name}.js`), "utf8");
      const imported = new Set(
        [
          ...code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)";?$/gm),
          ...code.matchAll(/^import\s*"([^"]+)";?$/gm),
          ...code.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
        ]
          .map(([, specifier]) => specifier)
          .filter((specifier) => !specifier.startsWith("node:"))
          .map(packageOf),
      );
      packages += imported.size;
      for (const name of imported) expect(manifest.dependencies, `${name}`).toHaveProperty([name]);
      for (const tool of BUILD_TOOLS) expect([...imported]).not.toContain(tool);
      expect(code).not.toMatch(/require\(["'](esbuild|tsx)/);
    }
    // The pattern finds imports at all (the worker threads' modules import only Node's).
    expect(packages).toBeGreaterThan(0);
    // The AWS SDK only when an S3 store sends its first command: a platform on the file store never loads it.
    const main = await readFile(join(out, "main.js"), "utf8");
    expect(main).not.toMatch(/^import\b[^;]*?\bfrom\s*"@aws-sdk\//m);
    expect(main).toMatch(/\bimport\(\s*"@aws-sdk\/client-s3"\s*\)/);
  });

  it("starts every worker thread the bundle needs from the bundle", async () => {
    // Worker threads start through the kit's moduleWorker (a module of the build beside the bundle), or run source
    // passed as text (eval), bundled as it is.
    const grep = (pattern: string) =>
      promisify(execFile)("grep", ["-rn", pattern, "services", "agent", "platform", "gateway"], { cwd: ROOT }).then(
        ({ stdout }) =>
          stdout
            .trim()
            .split("\n")
            .filter((line) => !line.includes(".test.ts")),
      );
    const starters = (await grep("new Worker(")).map((line) => line.split(":")[0]).sort();
    expect([...new Set(starters)]).toEqual([
      "services/kit/runtime/module-worker.ts",
      "services/tools/domain/run/schema-sandbox.ts",
    ]);
    const modules = (await grep("moduleWorker(import.meta.url,")).map(
      (line) => /moduleWorker\(import\.meta\.url, "([^"]+)"/.exec(line)?.[1] ?? line,
    );
    expect(modules.sort()).toEqual(["agent", "render-worker", "wasi-worker"]);
    for (const name of modules) expect(await readdir(out)).toContain(`${name}.js`);
    // The agent's WASI worker is a module of the build, never read from wasi-worker.ts when a job runs.
    expect(await readFile(join(out, "wasi-worker.js"), "utf8")).toContain("new WASI");
    expect(await readFile(join(out, "agent.js"), "utf8")).not.toContain("wasi-worker.ts");
  });

  it("keeps the build tools out of the production dependencies and npm start working after npm ci", () => {
    for (const tool of BUILD_TOOLS) {
      expect(manifest.dependencies).not.toHaveProperty([tool]);
      expect(manifest.devDependencies).toHaveProperty([tool]);
    }
    expect(manifest.scripts.build).toBe("tsx deploy/build.ts dist");
    expect(manifest.scripts.prestart).toBe("node deploy/fresh.mjs node_modules/.cache/pf-platform");
    expect(manifest.scripts.start).toBe(
      "exec env MALLOC_MMAP_THRESHOLD_=4194304 node node_modules/.cache/pf-platform/main.js",
    );
  });

  it("rebuilds at prestart only when something the bundle is made from changed since it was made", async () => {
    await prestart();
    const before = await made();
    await prestart();
    expect(await made()).toBe(before);
    // A source touched, its text the same: the stamp's inputs no longer match.
    const source = join(ROOT, "platform/embedded-agent.ts");
    await utimes(source, new Date(), new Date());
    await prestart();
    expect(await made()).toBeGreaterThan(before);
    // A file of the bundle gone: rebuilt too.
    const after = await made();
    await rm(join(out, "agent.js"));
    await prestart();
    expect(await made()).toBeGreaterThan(after);
    expect(await readdir(out)).toContain("agent.js");
  }, 60_000);

  describe("the platform run from the bundle, embedded", () => {
    let platform: ImageProcess | undefined;
    // Its data folder is in `out`, removed with it.
    afterAll(() => platform?.stop());

    it("runs its embedded agent from the bundle too: it pairs, and runs a submitted job to completion", async () => {
      const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      const env = {
        PF_JWT_PRIVATE_KEY: key,
        PF_SERVICES: "bot,run,billing,media",
        PF_HTTP_PORT: String((await freePorts(1))[0]),
        PF_RPC_PORT: "0",
        PF_METRICS_PORT: "0",
        PF_HOST_SITES_PORT: "0",
        LOG_LEVEL: "warn",
        PF_DATA_DIR: await mkdtemp(join(out, "data-")),
      };
      const token = await mintToken(await loadKeys(loadConfig(env)), {
        kind: "app",
        app_id: "app_bundle",
        project_id: "prj_bundle",
        caps: ["run.job.submit", "run.job.read"],
      });
      platform = await startInImage(ROOT, ["node", join(out, "main.js")], env, 120_000);
      const call = async (method: string, path: string, body?: unknown) => {
        const answer = await fetch(`${platform!.url}/run/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: answer.status, body: (await answer.json()) as any };
      };
      await until(
        () =>
          fetch(`${platform!.url}/readyz`).then(
            (answer) => answer.status === 200,
            () => false,
          ),
        60_000,
      );
      const job = { class: "function", artifact: "echo", args: { text: "bundled" }, ttl_ms: 60_000, limits: {} };
      const submitted = await call("POST", "/jobs", job);
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
      let read: { state: string; [key: string]: any } = submitted.body.job;
      await until(async () => (read = (await call("GET", `/jobs/${read.id}`)).body.job).state === "ended", 60_000);
      expect(read.exit, platform.output()).toMatchObject({ reason: "completed", code: 0 });
      expect(read.result.stdout).toBe('{"text":"bundled"}\n');
      // The agent is the bundle's agent.js in a worker thread of the platform's (the build's entry beside main.js, as
      // the worker threads' test above holds): no process of its own.
      const statePath = join(env.PF_DATA_DIR, "agent", "state.json");
      const agents: string[] = [];
      for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
        if (cmdline.includes(statePath)) agents.push(cmdline.split("\0").join(" "));
      }
      expect(agents).toEqual([]);
    }, 180_000);
  });
});
