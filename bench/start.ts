import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { adminQuery, withDatabase } from "../services/kit/db/server.js";
import type { Benchmark, LoadResult } from "./load.js";
import { freePorts } from "../tests/support/ports.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DATABASE = "pf_bench_start";
/** How long the platform idles after it is ready before its memory is read. */
const IDLE_MS = 5_000;
const READY_TIMEOUT_MS = 120_000;
/** Issue 33's goals: seconds to ready, and the embedded platform's idle memory (all 24 services). */
const GOALS = { cold: 5, warm: 2, url: 2, rssMb: 400 };

/** One start measured: seconds to ready, where they went, and the process tree once idle. */
interface StartFigures {
  seconds: number;
  /** CPU seconds the tree spent up to ready (user + system: every process alive then, and those they waited for). */
  cpuSeconds: number;
  /** The start's phases, from the platform's phase lines (`startPhases`). */
  phases: string;
  rssMb: number;
  processes: { command: string; rssMb: number }[];
}

/** A phase line of the platform's log, as the bench reads it. */
export interface PhaseLine {
  phase: string;
  /** The line's time (epoch ms) and the platform process's age then. */
  time: number;
  uptimeMs: number;
}

/**
 * Where a start's time went, from its spawn (epoch ms) to ready: npm and its prestart (the bundle) until the
 * platform's process began, loading its code until its first phase line, the database, the services (their
 * migrations, contexts, workers), the ports (the gateway built), and the rest until /readyz answered 200.
 */
export function startPhases(lines: readonly PhaseLine[], spawnedAt: number, readyAt: number): string {
  const first = lines[0];
  if (!first) return "no phase lines";
  const at = (phase: string) => lines.findLast((line) => line.phase === phase)?.time ?? NaN;
  const began = first.time - first.uptimeMs;
  const spans: [string, number][] = [
    ["npm + bundle", began - spawnedAt],
    ["code loaded", first.uptimeMs],
    ["database", at("database") - first.time],
    ["services", at("workers") - at("database")],
    ["ports", at("ports") - at("workers")],
    ["to /readyz", readyAt - at("ports")],
  ];
  return spans.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(2)}`).join(", ") + " s";
}

/**
 * `npm start` as a newcomer runs it, timed from the spawn to `/readyz` 200 (the
 * database and NATS reachable, every service started), then left idle 5 s and
 * its memory read from /proc: the resident set of every process of the tree
 * (npm and what it starts), summed. Embedded: a fresh data folder (cold), then
 * the same folder again (warm); with DATABASE_URL: a fresh database of that
 * server, then the same database again. NATS_URL is left out, so events stay in
 * process in every row. Each note says where the time went (`startPhases`).
 */
export const startAndMemory: Benchmark = {
  name: "start",
  async run() {
    const rows: LoadResult[] = [];
    const notes: string[] = [];
    const record = (label: string, figures: StartFigures, goalSeconds: number) => {
      rows.push(startRow(label, figures, goalSeconds));
      const tree = figures.processes.map((p) => `${p.command} ${p.rssMb.toFixed(0)}`).join(" + ");
      notes.push(
        `${label}: ${figures.seconds.toFixed(2)} s to /readyz 200, ${figures.cpuSeconds.toFixed(1)} CPU s (${figures.phases}); idle RSS ${figures.rssMb.toFixed(0)} MB = ${tree}`,
      );
      return figures;
    };

    const dataDir = await mkdtemp(join(tmpdir(), "pf-bench-start-"));
    try {
      record("start (embedded, cold)", await measureStart({ PF_DATA_DIR: dataDir }), GOALS.cold);
      const warm = record("start (embedded, warm)", await measureStart({ PF_DATA_DIR: dataDir }), GOALS.warm);
      rows.push({
        ...startRow("idle RSS (embedded, warm)", warm, NaN),
        p50: NaN,
        p99: NaN,
        cpuPerRequest: NaN,
        goal: { figure: "rssMb", below: GOALS.rssMb },
      });
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
        record("start (DATABASE_URL, new database)", await measureStart(env), GOALS.url);
        record("start (DATABASE_URL, again)", await measureStart(env), GOALS.url);
      } finally {
        await adminQuery(server, `drop database if exists ${DATABASE} with (force)`);
        await rm(urlDataDir, { recursive: true, force: true });
      }
    }
    return { rows, notes };
  },
};

/** The table's row: p50 and p99 both hold the milliseconds to ready; CPU µs/req the tree's CPU up to then. */
function startRow(label: string, figures: StartFigures, goalSeconds: number): LoadResult {
  const ms = figures.seconds * 1000;
  return {
    label,
    requests: 1,
    rps: NaN,
    p50: ms,
    p99: ms,
    failures: 0,
    cpuPerRequest: figures.cpuSeconds * 1e6,
    rssMb: figures.rssMb,
    goal: { figure: "p99", below: goalSeconds * 1000 },
  };
}

async function measureStart(env: Record<string, string>): Promise<StartFigures> {
  const [http, rpc, metrics] = await freePorts(3);
  const started = performance.now();
  const spawnedAt = Date.now();
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...platformFreeEnvironment(),
      PF_HTTP_PORT: String(http),
      PF_RPC_PORT: String(rpc),
      PF_METRICS_PORT: String(metrics),
      // Info for the phase lines (a few dozen lines).
      LOG_LEVEL: "info",
      ...env,
    },
  });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-5_000)));
  const phases: PhaseLine[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.includes('"phase"')) return;
    const { phase, time, uptimeMs } = JSON.parse(line) as PhaseLine;
    phases.push({ phase, time, uptimeMs });
  });
  try {
    await ready(`http://127.0.0.1:${http}/readyz`, child, () => output);
    const seconds = (performance.now() - started) / 1000;
    const readyAt = Date.now();
    const cpuSeconds = processTree(child.pid!).reduce((sum, p) => sum + p.cpuSeconds, 0);
    await new Promise((done) => setTimeout(done, IDLE_MS));
    const processes = processTree(child.pid!).map(({ command, rssMb }) => ({ command, rssMb }));
    return {
      seconds,
      cpuSeconds,
      phases: startPhases(phases, spawnedAt, readyAt),
      rssMb: processes.reduce((sum, p) => sum + p.rssMb, 0),
      processes,
    };
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
        // utime, stime, cutime and cstime: fields 14 to 17, the 12th to 15th after the command. The children's
        // (cutime, cstime) are those it has waited for, gone now: npm's prestart (the bundle's build) among them.
        cpuSeconds: fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0) / ticks,
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
