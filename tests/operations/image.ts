import { spawn, execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { bundle } from "../../deploy/build.js";
import { until } from "../support/until.js";

/**
 * What the image holds, made here since no base image can be pulled: a folder with the bundle, package.json and the
 * production dependency tree only (`npm ci --omit=dev`'s, linked from node_modules), outside the repository so
 * nothing resolves from its node_modules.
 */

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

export interface Instruction {
  /** The stage it belongs to, 0 for the first FROM. */
  stage: number;
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
export function dockerfileInstructions(text: string): Instruction[] {
  let stage = -1;
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      if (keyword.toUpperCase() === "FROM") stage++;
      return { stage, keyword: keyword.toUpperCase(), args: rest.join(" ") };
    });
}

/** The environment the image's final stage sets (`ENV A=b C=d`). */
export async function imageEnvironment(): Promise<Record<string, string>> {
  const instructions = dockerfileInstructions(await readFile(join(ROOT, "Dockerfile"), "utf8"));
  const last = Math.max(...instructions.map((instruction) => instruction.stage));
  return Object.fromEntries(
    instructions
      .filter((instruction) => instruction.stage === last && instruction.keyword === "ENV")
      .flatMap((instruction) => instruction.args.split(/\s+/).map((pair) => pair.split("=", 2) as [string, string])),
  );
}

/** The image's /app: dist (npm run build's), package.json and the production node_modules. */
export async function imageFolder(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "pf-image-"));
  await bundle(join(dir, "dist"));
  await copyFile(join(ROOT, "package.json"), join(dir, "package.json"));
  const { stdout } = await run("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  // The top-level packages carry their own nested node_modules along.
  const packages = stdout
    .split("\n")
    .map((path) => path.slice(ROOT.length))
    .filter((path) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path));
  // Hard links: the same bytes, no copy (the temporary folder is on the same disk here); a copy where it is not.
  await run("cp", ["-al", "--parents", "-t", dir, ...packages], { cwd: ROOT }).catch(() =>
    run("cp", ["-a", "--parents", "-t", dir, ...packages], { cwd: ROOT }),
  );
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface ImageProcess {
  /** Its gateway's address. */
  url: string;
  output(): string;
  /** SIGTERM; answers its exit code. */
  stop(): Promise<number | null>;
}

/** Runs a command in the image folder as the image would (its environment first, then these settings), until /healthz answers. */
export async function startInImage(
  dir: string,
  command: string[],
  env: Record<string, string>,
  readyWithinMs = 90_000,
): Promise<ImageProcess> {
  const [program, ...args] = command;
  const child = spawn(program === "node" ? process.execPath : program, args, {
    cwd: dir,
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${env.PF_HTTP_PORT}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`${command.join(" ")} exited ${child.exitCode}:\n${output}`);
    return fetch(`${url}/healthz`).then(
      (answer) => answer.status === 200,
      () => false,
    );
  }, readyWithinMs).catch(async (error: Error) => {
    child.kill("SIGKILL");
    await exited;
    throw new Error(`${error.message}\n${output}`);
  });
  return { url, output: () => output, stop };
}
