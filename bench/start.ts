import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { adminQuery, withDatabase } from "../services/kit/db/server.js";
import type { Benchmark, LoadResult } from "./load.js";
import { freePorts } from "../tests/support/ports.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DATABASE = "pf_bench_start";
/** How long the platform idles after it is ready before its memory is read. */
const IDLE_MS = 5_000;
const READY_TIMEOUT_MS = 120_000;
const GOALS = {
  cold: { seconds: 5, rssMb: 400 },
  warm: { seconds: 2, rssMb: 400 },
  url: { seconds: undefined, rssMb: 250 },
};

/** One start measured: seconds to ready, and the process tree once idle. */
interface StartFigures {
  seconds: number;
  /** CPU seconds the tree spent up to ready (user + system, every process still alive then). */
  cpuSeconds: number;
  rssMb: number;
  processes: { command: string; rssMb: number }[];
}

/**
 * `npm start` as a newcomer runs it, timed from the spawn to `/readyz` 200 (the
 * database and NATS reachable, every service started), then left idle 5 s and
 * its memory read from /proc: the resident set of every process of the tree
 * (npm and what it starts), summed. Embedded: a fresh data folder (cold), then
 * the same folder again (warm); with DATABASE_URL: a fresh database of that
 * server. NATS_URL is left out, so events stay in process in every row.
 */
export const startAndMemory: Benchmark = {
  name: "start",
  async run() {
    const rows: LoadResult[] = [];
    const notes: string[] = [];
    const record = (label: string, figures: StartFigures, goal: { seconds?: number; rssMb: number }) => {
      rows.push(startRow(label, figures));
      const time = `${figures.seconds.toFixed(2)} s to /readyz 200${goal.seconds ? ` (goal < ${goal.seconds} s)` : ""}`;
      const tree = figures.processes.map((p) => `${p.command} ${p.rssMb.toFixed(0)}`).join(" + ");
      notes.push(
        `${label}: ${time}, ${figures.cpuSeconds.toFixed(1)} CPU s; idle RSS ${figures.rssMb.toFixed(0)} MB = ${tree} (goal < ${goal.rssMb} MB)`,
      );
    };

    const dataDir = await mkdtemp(join(tmpdir(), "pf-bench-start-"));
    try {
      record("start (embedded, cold)", await measureStart({ PF_DATA_DIR: dataDir }), GOALS.cold);
      record("start (embedded, warm)", await measureStart({ PF_DATA_DIR: dataDir }), GOALS.warm);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }

    const server = process.env.DATABASE_URL;
    if (!server) notes.push("start (DATABASE_URL): skipped, DATABASE_URL is unset");
    else {
      const urlDataDir = await mkdtemp(join(tmpdir(), "pf-bench-start-"));
      await adminQuery(server, `drop database if exists ${DATABASE} with (force)`);
      await adminQuery(server, `create database ${DATABASE}`);
      try {
        const env = { PF_DATA_DIR: urlDataDir, DATABASE_URL: withDatabase(server, DATABASE) };
        record("start (DATABASE_URL)", await measureStart(env), GOALS.url);
      } finally {
        await adminQuery(server, `drop database if exists ${DATABASE} with (force)`);
        await rm(urlDataDir, { recursive: true, force: true });
      }
    }
    return { rows, notes };
  },
};

/** The table's row: p50 and p99 both hold the milliseconds to ready; CPU µs/req the tree's CPU up to then. */
function startRow(label: string, figures: StartFigures): LoadResult {
  const ms = figures.seconds * 1000;
  return { label, requests: 1, rps: NaN, p50: ms, p99: ms, failures: 0, cpuPerRequest: figures.cpuSeconds * 1e6 };
}

async function measureStart(env: Record<string, string>): Promise<StartFigures> {
  const [http, rpc, metrics] = await freePorts(3);
  const started = performance.now();
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...platformFreeEnvironment(),
      PF_HTTP_PORT: String(http),
      PF_RPC_PORT: String(rpc),
      PF_METRICS_PORT: String(metrics),
      LOG_LEVEL: "warn",
      ...env,
    },
  });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-5_000)));
  try {
    await ready(`http://127.0.0.1:${http}/readyz`, child, () => output);
    const seconds = (performance.now() - started) / 1000;
    const cpuSeconds = processTree(child.pid!).reduce((sum, p) => sum + p.cpuSeconds, 0);
    await new Promise((done) => setTimeout(done, IDLE_MS));
    const processes = processTree(child.pid!).map(({ command, rssMb }) => ({ command, rssMb }));
    return { seconds, cpuSeconds, rssMb: processes.reduce((sum, p) => sum + p.rssMb, 0), processes };
  } finally {
    await stopGroup(child);
  }
}

/** The caller's environment without the platform's settings, which would change what `npm start` does. */
function platformFreeEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith("PF_") && !["LOG_LEVEL", "DATABASE_URL", "NATS_URL"].includes(name),
    ),
  );
}

async function ready(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`npm start exited before it was ready:\n${output()}`);
    const answer = await fetch(url).catch(() => undefined);
    if (answer?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`not ready after ${READY_TIMEOUT_MS} ms:\n${output()}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** The process and all its descendants, from /proc: command, resident set and CPU time so far. */
function processTree(root: number): { pid: number; command: string; rssMb: number; cpuSeconds: number }[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(Number(entry), "stat");
    // The command (field 2) may hold spaces and parentheses: the fields after it start after the last ")".
    if (stat) parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  const ticks = 100; // USER_HZ on Linux
  return tree.flatMap((pid) => {
    const stat = readProc(pid, "stat");
    const status = readProc(pid, "status");
    if (!stat || !status) return [];
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    return [
      {
        pid,
        command: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
        rssMb: rssKb / 1024,
        // utime and stime: fields 14 and 15, the 12th and 13th after the command.
        cpuSeconds: (Number(fields[11]) + Number(fields[12])) / ticks,
      },
    ];
  });
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Stops the tree and waits until every process of it is gone: the next start may use the same data folder. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  const pids = processTree(child.pid).map((p) => p.pid);
  // A zombie has ended; only its parent has not looked yet.
  const alive = () => pids.filter((pid) => !/\) Z /.test(readProc(pid, "stat") ?? ") Z "));
  if (alive().length > 0) process.kill(-child.pid, "SIGTERM");
  const deadline = Date.now() + 15_000;
  while (alive().length > 0) {
    if (Date.now() > deadline) for (const pid of alive()) process.kill(pid, "SIGKILL");
    await new Promise((done) => setTimeout(done, 50));
  }
}
