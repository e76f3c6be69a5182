import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { until } from "./until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** How long a child platform may take to answer /readyz before its start is called failed. */
export const CHILD_START_MS = 90_000;

/** The platform as operators run it (`npm start`'s entry point) in a process of its own, which a test may kill. */
export interface ChildPlatform {
  gatewayUrl: string;
  /** `kill -9`: no shutdown, nothing flushed. */
  kill(): Promise<void>;
  /** SIGTERM, as an operator stops it. */
  stop(): Promise<void>;
  /** What it printed on its standard output so far (its log lines). */
  output(): string;
}

/**
 * Starts platform/main.ts on Node with these settings (merged over the test's environment) and waits for /readyz. The
 * bound only says when to give up: tsx compiles the sources as the child loads them, which took over 30 s with the
 * whole suite running on two cores. A test starting one allows for it (`CHILD_START_MS` per start in its timeout).
 */
export async function startChildPlatform(
  env: Record<string, string>,
  readyWithinMs = CHILD_START_MS,
): Promise<ChildPlatform> {
  const port = env.PF_HTTP_PORT;
  if (!port) throw new Error("a child platform needs PF_HTTP_PORT, so a restart answers on the same address");
  const child = spawn(process.execPath, ["--import", "tsx", "platform/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", PF_METRICS_PORT: "0", PF_HOST_SITES_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: Buffer[] = [];
  child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const gatewayUrl = `http://127.0.0.1:${port}`;
  // Its refusal to start is a log line (standard output): the last few go with the error.
  const said = () => `${stderr}${Buffer.concat(stdout).toString().slice(-2_000)}`;
  const ready = async () => {
    if (child.exitCode !== null) throw new Error(`the child platform exited (${child.exitCode}): ${said()}`);
    return fetch(`${gatewayUrl}/readyz`).then(
      (answer) => answer.status === 200,
      () => false,
    );
  };
  await until(ready, readyWithinMs).catch((error: Error) => {
    child.kill("SIGKILL");
    throw error.message.startsWith("timed out")
      ? new Error(`the child platform was not ready within ${readyWithinMs} ms: ${said()}`)
      : error;
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    gatewayUrl,
    kill: () => end("SIGKILL"),
    stop: () => end("SIGTERM"),
    output: () => Buffer.concat(stdout).toString(),
  };
}
