import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundle, ENTRIES } from "../../deploy/build.js";
import { ROOT } from "./image.js";

/**
 * `npm run build`: every entry production runs, bundled once, importing only Node's modules and production
 * dependencies, so the image runs plain node without a compiler; `npm start` still works after a plain `npm ci`.
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
  let out = "";

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), "pf-build-"));
    await bundle(out);
  }, 60_000);

  afterAll(() => rm(out, { recursive: true, force: true }));

  it("bundles the platform, its render worker, the token command and the agent", async () => {
    const files = await readdir(out);
    for (const name of Object.keys(ENTRIES)) expect(files).toContain(`${name}.js`);
    // The agent's catalogue, read beside its bundle.
    expect(await readdir(join(out, "function"))).toContain("lib.wat");
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
    expect(modules.sort()).toEqual(["render-worker", "wasi-worker"]);
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
    expect(manifest.scripts.prestart).toBe("tsx deploy/build.ts node_modules/.cache/pf-platform");
    expect(manifest.scripts.start).toBe("exec node node_modules/.cache/pf-platform/main.js");
  });
});
