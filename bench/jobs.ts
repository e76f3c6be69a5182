import { spawn } from "node:child_process";
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
 * paired over the gateway's WebSocket on loopback) and run, bot, billing and media in this process. Each job is the `echo` function,
 * submitted through the gateway with a project's token and watched on its SSE stream (opened with the same token).
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
      const job = jobRunner(bench, token);
      for (let i = 0; i < WARMUP; i++) await job(); // the agent's worker, every route, V8's compiled paths
      const rows: LoadResult[] = [];
      const latencies = new Float64Array(JOBS);
      const profile = profiling() ? await startProfile() : undefined;
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < JOBS; i++) latencies[i] = (await job()).firstOutputMs;
      rows.push({
        ...row("submit → first output", latencies, performance.now() - started, cpu),
        goal: { figure: "p99", below: 50 },
        profile: await profile?.(),
      });

      const durations = new Float64Array(BURST);
      const burstCpu = process.cpuUsage();
      const burstStart = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < BURST; i = next++) durations[i] = (await job()).endedMs;
        }),
      );
      rows.push(
        row(`jobs through one agent, ${CONCURRENCY} at once`, durations, performance.now() - burstStart, burstCpu),
      );
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

/** Submits an echo job and reads its stream to the end: when its first output and its end arrived. */
function jobRunner(bench: BenchPlatform, token: string) {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const body = JSON.stringify({
    class: "function",
    artifact: "echo",
    args: { text: "hi" },
    ttl_ms: 60_000,
    limits: {},
  });
  return async () => {
    const start = performance.now();
    const submitted = await fetch(`${bench.gatewayUrl}/run/api/v1/jobs`, { method: "POST", headers, body });
    if (submitted.status !== 201) throw new Error(`submit answered ${submitted.status}: ${await submitted.text()}`);
    const { job } = (await submitted.json()) as { job: { id: string } };
    const stream = await fetch(`${bench.gatewayUrl}/run/api/v1/jobs/${job.id}/stream`, { headers });
    if (stream.status !== 200) throw new Error(`stream answered ${stream.status}: ${await stream.text()}`);
    let firstOutputMs = NaN;
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream.body!) {
      text += decoder.decode(chunk, { stream: true });
      if (Number.isNaN(firstOutputMs) && text.includes("event: output")) firstOutputMs = performance.now() - start;
      if (/"state":\{"state":"ended"/.test(text)) break;
    }
    const endedMs = performance.now() - start;
    await stream.body!.cancel().catch(() => undefined);
    if (!text.includes('"reason":"completed"')) throw new Error(`job ${job.id} did not complete: ${text.slice(-500)}`);
    return { firstOutputMs, endedMs };
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
