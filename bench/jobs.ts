import { fork, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createClient } from "@connectrpc/connect";
import { BotService } from "../gen/pf/bot/v1/bot_pb.js";
import { BotLinkService } from "../gen/pf/bot/v1/link_service_pb.js";
import { startEmbeddedAgent } from "../platform/embedded-agent.js";
import { loadConfig } from "../services/kit/runtime/config.js";
import { createLogger } from "../services/kit/runtime/logger.js";
import { percentile, type Benchmark, type LoadResult } from "./load.js";
import { profiling, startProfile } from "./profile.js";
import { startBenchPlatform, type BenchPlatform } from "./platform.js";

/** Jobs submitted one after another for the latency (BENCH_JOBS). */
const JOBS = Number(process.env.BENCH_JOBS || 200);
/**
 * Jobs run before the measured ones (BENCH_JOB_WARMUP): a fresh process's first ten or so jobs took twice the steady
 * time while V8 compiled their paths (80–96 ms against 45, Node 26), three of them the p99 of 300.
 */
const WARMUP = Number(process.env.BENCH_JOB_WARMUP || 20);
/** Jobs submitted for the throughput, and how many at once (BENCH_JOB_BURST, BENCH_JOB_CONCURRENCY). */
const BURST = Number(process.env.BENCH_JOB_BURST || 200);
const CONCURRENCY = Number(process.env.BENCH_JOB_CONCURRENCY || 8);
/** Idle device links held by one platform process (BENCH_LINKS). */
const LINKS = Number(process.env.BENCH_LINKS || 1000);

/**
 * Jobs through the real device agent (issue 28): `npm start`'s embedded agent (a worker thread of this process,
 * paired over the gateway's WebSocket on loopback) and run, bot, billing and media in this process. Each job is the
 * `echo` function, submitted through the gateway with a project's token and watched on its SSE stream (opened with the
 * same token) by a client in a process of its own (`jobs-child.ts`), as every row's load generator is.
 * `submit → first output`: from the submit's request to the first `output` event, one job at a time (goal p99 <
 * 50 ms). `jobs through one agent`: BURST jobs, CONCURRENCY at a time, each from submit to its `ended` event.
 * `device links`: LINKS devices paired, their links opened and held idle by a child load process; the platform
 * process's memory per link (goal < 50 kB).
 */
export const jobDispatch: Benchmark = {
  name: "jobs",
  async run() {
    // One load process on one address stands in for every device: its link attempts are not the limit measured.
    const bench = await startBenchPlatform({
      PF_SERVICES: "bot,run,billing,media",
      PF_BOT_LINKS_PER_MINUTE: "1000000",
    });
    const agentDir = await mkdtemp(join(tmpdir(), "pf-bench-agent-"));
    const config = loadConfig({ ...process.env, PF_DATA_DIR: agentDir });
    const agent = await startEmbeddedAgent(bench.platform, config, createLogger("warn"));
    try {
      await agent.paired;
      const token = await bench.platform.mintToken({
        kind: "app",
        app_id: "app_bench",
        project_id: "prj_bench",
        caps: ["run.job.submit", "run.job.read", "run.job.stream"],
      });
      const client = jobsClient({
        gatewayUrl: bench.gatewayUrl,
        token,
        warmup: WARMUP,
        jobs: JOBS,
        burst: BURST,
        concurrency: CONCURRENCY,
      });
      const rows: LoadResult[] = [];
      try {
        rows.push({
          ...(await client.phase("submit → first output")),
          goal: { figure: "p99", below: 50 },
        });
        rows.push(await client.phase(`jobs through one agent, ${CONCURRENCY} at once`));
      } finally {
        client.stop();
      }
      const links = await idleLinks(bench);
      return {
        rows,
        notes: [
          `submit → first output p99 ${rows[0].p99.toFixed(1)} ms (goal < 50 ms: ${rows[0].p99 < 50 ? "met" : "not met"})`,
          `${rows[1].rps.toFixed(1)} jobs/s through one agent (${CONCURRENCY} at once; its default 2 slots)`,
          links,
        ],
      };
    } finally {
      await agent.stop();
      await bench.stop();
      await rm(agentDir, { recursive: true, force: true });
    }
  },
};

/** What the parent tells the job client (`jobs-child.ts`). */
export interface JobsPlan {
  gatewayUrl: string;
  token: string;
  warmup: number;
  jobs: number;
  burst: number;
  concurrency: number;
}

/** What the job client says: a measured phase begins; its times (ms per job), once it ended. */
export type JobsChildMessage = { kind: "measuring" } | { kind: "times"; times: number[] };

/**
 * The job client in its own process: each `phase` waits for its start (the warm-up done), measures this process's
 * CPU (and its profile with BENCH_PROFILE=1) over it, and answers its row from the client's times.
 */
function jobsClient(plan: JobsPlan) {
  // fork keeps the parent's execArgv, so tsx loads the TypeScript child too.
  const child = fork(new URL("./jobs-child.ts", import.meta.url), { serialization: "advanced" });
  const waiting: ((message: JobsChildMessage) => void)[] = [];
  const arrived: JobsChildMessage[] = [];
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure = error;
    for (const resolve of waiting.splice(0)) resolve({ kind: "times", times: [] });
  };
  child.on("message", (message: JobsChildMessage) => {
    const resolve = waiting.shift();
    if (resolve) resolve(message);
    else arrived.push(message);
  });
  child.once("error", fail);
  child.once("close", (code) => fail(new Error(`the job client exited with ${String(code)} before reporting`)));
  const next = async (kind: JobsChildMessage["kind"]) => {
    const message = arrived.shift() ?? (await new Promise<JobsChildMessage>((resolve) => waiting.push(resolve)));
    if (failure) throw failure;
    if (message.kind !== kind) throw new Error(`the job client said ${message.kind}, not ${kind}`);
    return message;
  };
  child.send(plan);
  return {
    async phase(label: string): Promise<LoadResult> {
      await next("measuring");
      const profile = profiling() ? await startProfile() : undefined;
      const cpu = process.cpuUsage();
      const started = performance.now();
      const { times } = (await next("times")) as { times: number[] };
      return { ...row(label, Float64Array.from(times), performance.now() - started, cpu), profile: await profile?.() };
    },
    stop: () => child.kill(),
  };
}

function row(label: string, times: Float64Array, elapsedMs: number, cpu: NodeJS.CpuUsage): LoadResult {
  const used = process.cpuUsage(cpu);
  const sorted = times.slice().sort();
  return {
    label,
    requests: times.length,
    rps: times.length / (elapsedMs / 1000),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    failures: 0,
    cpuPerRequest: (used.user + used.system) / times.length,
  };
}

/** LINKS devices paired through bot's routes, their links held open by a child process: memory per link here. */
async function idleLinks(bench: BenchPlatform): Promise<string> {
  const token = await bench.platform.mintToken({ kind: "service", svc: "bench", caps: ["bot.robot.manage"] });
  const bot = createClient(BotService, bench.platform.transport);
  const link = createClient(BotLinkService, bench.platform.transport);
  const credentials: string[] = [];
  const pairStart = performance.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (n < LINKS) {
        const i = n++;
        const created = await bot.createRobot(
          { owner: "usr_bench", name: `idle ${i}` },
          { headers: { authorization: `Bearer ${token}` } },
        );
        const paired = await link.pairDevice({ code: created.pairingCode!.code, name: `idle ${i}` });
        credentials.push(paired.credential);
      }
    }),
  );
  const pairMs = performance.now() - pairStart;
  const before = await collectedMemory();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "bench/links-child.ts", `${bench.gatewayUrl.replace(/^http/, "ws")}/bot/api/v1/devices/link`],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    child.stdin.end(credentials.map((c) => JSON.stringify(c)).join("\n") + "\n");
    const openStart = performance.now();
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      void exited.then(() => reject(new Error("the link load process exited")));
    });
    const openMs = performance.now() - openStart;
    const { open, failed } = JSON.parse(line) as { open: number; failed: number };
    // Settled: bot has recorded each hello; the memory is read once the process is quiet again.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await collectedMemory();
    const perLink = (key: keyof NodeJS.MemoryUsage) => (after[key] - before[key]) / 1024 / Math.max(open, 1);
    // What the links keep alive: V8's heap and the memory outside it that JavaScript objects hold (Buffers among it).
    const retained = perLink("heapUsed") + perLink("external");
    return (
      `${open} idle device links held (${failed} refused; ${LINKS} paired in ${(pairMs / 1000).toFixed(1)} s, opened in ` +
      `${(openMs / 1000).toFixed(1)} s): ${retained.toFixed(1)} kB retained per link in the platform process after a ` +
      `full collection (heap ${perLink("heapUsed").toFixed(1)} kB, external ${perLink("external").toFixed(1)} kB of ` +
      `which ArrayBuffers ${perLink("arrayBuffers").toFixed(1)} kB; RSS ${perLink("rss").toFixed(1)} kB) ` +
      `(goal < 50 kB: ${retained < 50 ? "met" : "not met"})`
    );
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** The process's memory after a full collection: node runs the bench without --expose-gc, so it is exposed here. */
async function collectedMemory(): Promise<NodeJS.MemoryUsage> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  // Twice, a turn apart: what the first frees may hold objects only the next one finds unreachable (finalizers).
  gc();
  await new Promise(setImmediate);
  gc();
  return process.memoryUsage();
}
