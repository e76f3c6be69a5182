import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { services } from "../../clients/ts/src/services.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PACKAGE = join(ROOT, "clients/ts");

/** What the package needs installed beside it (its dependencies, and Node's types to check an app against it). */
const INSTALLED = [
  "@bufbuild/protobuf",
  "@connectrpc/connect",
  "@connectrpc/connect-node",
  "@connectrpc/connect-web",
  "openapi-fetch",
  "openapi-typescript-helpers",
  "@types/node",
];

/** An app outside the repository using the package by its name, as one installed from a registry would. */
const APP = `
import { createPlatformClient, createPlatformFetch, PlatformError, type PlatformClient } from "@pf/client";
import { PasteSchema } from "@pf/client/gen/pf/community/v1/common_pb.js";

const pf: PlatformClient = createPlatformClient({ baseUrl: "http://127.0.0.1:8081", token: "t", subject: "usr_a" });
const api = createPlatformFetch({ baseUrl: "http://127.0.0.1:8080" });
export const read = () => api.GET("/community/api/pastes/{slug}", { params: { path: { slug: "a-paste" } } });
// @ts-expect-error: the route's path variable is required
export const wrong = () => api.GET("/community/api/pastes/{slug}", { params: { path: {} } });
export const write = () => pf.paste.createPaste({ title: "A paste", body: "text" });
console.log(JSON.stringify({ clients: Object.keys(pf).length, paste: PasteSchema.typeName, error: PlatformError.name }));
`;

let scratch: string;
let app: string;
let packed: string[];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "pf-client-"));
  // `npm pack` builds first (prepack): the OpenAPI types, then tsc into dist/.
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: PACKAGE });
  const [{ filename, files }] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  packed = files.map((file) => file.path);
  app = join(scratch, "app");
  const installed = join(app, "node_modules/@pf/client");
  await mkdir(installed, { recursive: true });
  await run("tar", ["-xzf", join(scratch, filename), "-C", installed, "--strip-components=1"]);
  for (const name of INSTALLED) {
    await mkdir(join(app, "node_modules", name, ".."), { recursive: true });
    await symlink(join(ROOT, "node_modules", name), join(app, "node_modules", name), "dir");
  }
  await writeFile(join(app, "package.json"), JSON.stringify({ type: "module" }));
  await writeFile(join(app, "app.ts"), APP);
  const options = { module: "NodeNext", target: "ES2022", strict: true, skipLibCheck: true, types: ["node"] };
  await writeFile(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: options, files: ["app.ts"] }));
}, 300_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("the client package, packed as it is published", () => {
  it("holds its build, README and package.json, nothing of the repository beside", () => {
    expect(packed.filter((path) => !path.startsWith("dist/")).sort()).toEqual(["README.md", "package.json"]);
    expect(packed).toContain("dist/clients/ts/src/generated/openapi.d.ts");
    expect(packed).toContain("dist/gen/pf/community/v1/pastes_pb.js");
  });

  it("type-checks and runs in an app outside the repository", async () => {
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    await run(process.execPath, [tsc, "-p", app]).catch((error: { stdout: string }) => {
      throw new Error(`tsc failed:\n${error.stdout}`);
    });
    const { stdout } = await run(process.execPath, [join(app, "app.js")], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      clients: Object.keys(services).length,
      paste: "pf.community.v1.Paste",
      error: "PlatformError",
    });
  }, 120_000);

  it("bundles for a browser without Node's modules (its browser entry calls over fetch)", async () => {
    const bundled = await build({
      absWorkingDir: app,
      entryPoints: ["app.js"],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    // Resolving a Node module for a browser fails the build: none is in the bundle.
    expect(bundled.errors).toEqual([]);
    expect(bundled.outputFiles[0].text).not.toMatch(/["'](node:)?http2["']/);
  }, 60_000);

  it("says in its package.json where each entry is, and every one exists", async () => {
    const manifest = JSON.parse(await readFile(join(app, "node_modules/@pf/client/package.json"), "utf8")) as {
      exports: Record<string, Record<string, string> | string>;
    };
    const targets = Object.values(manifest.exports).flatMap((entry) =>
      typeof entry === "string" ? [entry] : Object.values(entry),
    );
    for (const target of targets.filter((each) => !each.includes("*")))
      expect(packed, target).toContain(target.replace(/^\.\//, ""));
  });
});
