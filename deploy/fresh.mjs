/**
 * `npm start`'s prestart: `node deploy/fresh.mjs <folder>` bundles into the folder (deploy/build.ts) only when the
 * bundle there was not made from the inputs as they are now. Plain node, so a start with nothing changed loads
 * neither tsx nor esbuild (docs/deployment.md, "The build").
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath, URL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What the bundle is made from: the folders esbuild reads sources from, the build itself, what pins its tools. */
const INPUT_FOLDERS = ["platform", "services", "gateway", "agent", "gen"];
const INPUT_FILES = ["deploy/build.ts", "deploy/fresh.mjs", "package.json", "package-lock.json", "tsconfig.json"];

/** Written into the folder once a build ends: the inputs it was made from and the files the folder held then. */
const STAMP = "inputs.json";

/**
 * Every input's path, size and modification time, hashed: an edit, a new file, a removed or renamed one all change
 * it. Read before the build starts, so a source changed while it runs leaves the stamp behind it.
 */
function inputsDigest() {
  const paths = [...INPUT_FILES];
  for (const folder of INPUT_FOLDERS)
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true }))
      if (entry.isFile()) paths.push(join(entry.parentPath, entry.name).slice(ROOT.length));
  const hash = createHash("sha256");
  for (const path of paths.sort()) {
    const { size, mtimeMs } = statSync(join(ROOT, path));
    hash.update(`${path}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest("hex");
}

/** The stamp the folder holds, if its build ended and every file the folder held then is still there. */
function stampOf(folder) {
  try {
    const stamp = JSON.parse(readFileSync(join(folder, STAMP), "utf8"));
    return stamp.files.every((file) => existsSync(join(folder, file))) ? stamp : undefined;
  } catch {
    return undefined; // no build of ours yet
  }
}

if (!process.argv[2]) throw new Error("usage: node deploy/fresh.mjs <folder>");
const folder = resolve(process.argv[2]);
const inputs = inputsDigest();
if (stampOf(folder)?.inputs === inputs) process.exit(0);
const built = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "deploy/build.ts"), folder], {
  cwd: ROOT,
  stdio: "inherit",
});
if (built.status !== 0) process.exit(built.status ?? 1);
const files = readdirSync(folder).filter((file) => !file.startsWith(STAMP));
// Renamed into place: a start reading it at the same time sees the old stamp or the new, whole.
writeFileSync(join(folder, `${STAMP}.${process.pid}`), JSON.stringify({ inputs, files }));
renameSync(join(folder, `${STAMP}.${process.pid}`), join(folder, STAMP));
