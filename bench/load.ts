import { fork } from "node:child_process";
import { profiling, startProfile, type HotFunction } from "./profile.js";

/** How hard and how long every HTTP benchmark drives its targets. */
export interface LoadSettings {
  connections: number;
  /** Measured seconds per target. */
  duration: number;
  /** Seconds driven before measuring and thrown away (JIT, pools, caches). */
  warmup: number;
}

export interface LoadTarget {
  url: string;
  headers?: Record<string, string>;
  /** A request other than a plain GET (the abusive bodies of `abuse`). */
  method?: "POST";
  body?: string;
  /** The status every answer must have (else a 2xx). */
  status?: number;
  /** The server closes the connection while the body is still being sent: socket errors are expected. */
  hangsUp?: boolean;
  /** Connections of this target, when not the settings' own. */
  connections?: number;
  /** A mixed load: paths (with query) on `url`'s host that each connection sends in turn. */
  paths?: string[];
}

/** One target's figures: expected answers per second and their latency in ms. */
export interface LoadResult {
  label: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Unexpected answers (non-2xx unless the target says), socket errors and timeouts: any one makes the run a failure. */
  failures: number;
  /**
   * CPU time of this (the server's) process per answer while measured, in µs:
   * steadier than req/s when other work shares the cores.
   */
  cpuPerRequest: number;
  /** Issue 33's goal for this row, printed with its verdict. */
  goal?: Goal;
  /** The process tree's resident set once idle, in MB (`start`). */
  rssMb?: number;
  /** With BENCH_PROFILE=1: this process's hottest functions while measured (bench/profile.ts). */
  profile?: HotFunction[];
}

/**
 * What a row must reach: latency in ms below a bound, a rate at least one, the
 * rate as a ratio to another row of the same benchmark (`of`, its label), or the idle memory below a bound.
 */
export type Goal =
  | { figure: "p50" | "p99"; below: number }
  | { figure: "rps"; atLeast: number }
  | { figure: "ratio"; of: string; atLeast: number }
  | { figure: "rssMb"; below: number };

/** A row for a rate measured without latencies: `count` things at `perSecond`. */
export function rateRow(label: string, count: number, perSecond: number): LoadResult {
  return { label, requests: count, rps: perSecond, p50: NaN, p99: NaN, failures: 0, cpuPerRequest: NaN };
}

/** What the child measures; the rest is added here. */
export type LoadFigures = Omit<LoadResult, "label" | "cpuPerRequest" | "goal" | "rssMb" | "profile">;

/** The child's messages: the measured run starts, then its figures. */
export type ChildMessage = { kind: "measuring" } | { kind: "figures"; figures: LoadFigures };

export interface BenchReport {
  rows: LoadResult[];
  /** Lines comparing the rows (ratios, goals), printed under the table. */
  notes: string[];
}

export interface Benchmark {
  name: string;
  run(settings: LoadSettings): Promise<BenchReport>;
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  return {
    connections: positive(env.BENCH_CONNECTIONS, 50, "BENCH_CONNECTIONS"),
    duration: positive(env.BENCH_DURATION, 10, "BENCH_DURATION"),
    warmup: positive(env.BENCH_WARMUP, 3, "BENCH_WARMUP"),
  };
}

function positive(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0)
    throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(value)}`);
  return parsed;
}

/**
 * Drives one target from a child process: with 2 cores, a generator on the
 * server's event loop would measure the generator as much as the server.
 */
export function runLoad(label: string, target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  // fork keeps the parent's execArgv, so tsx loads the TypeScript child too;
  // "advanced" keeps NaN (no answers) as NaN.
  const child = fork(new URL("./load-child.ts", import.meta.url), { serialization: "advanced" });
  let cpu = process.cpuUsage();
  let profile: ReturnType<typeof startProfile> | undefined;
  return new Promise((resolve, reject) => {
    child.on("message", (message: ChildMessage) => {
      if (message.kind === "measuring") {
        cpu = process.cpuUsage();
        if (profiling()) profile = startProfile();
        return;
      }
      const { user, system } = process.cpuUsage(cpu);
      const { figures } = message;
      const result = {
        label,
        ...figures,
        cpuPerRequest: figures.requests > 0 ? (user + system) / figures.requests : NaN,
      };
      if (!profile) return resolve(result);
      profile.then((stop) => stop()).then((hot) => resolve({ ...result, profile: hot }), reject);
    });
    child.once("error", reject);
    // "close", not "exit": it follows the IPC channel's last message, which "exit" may overtake.
    child.once("close", (code) =>
      reject(new Error(`the load generator for ${label} exited with ${String(code)} before reporting`)),
    );
    child.send({ target, settings });
  });
}

/** The q-quantile (0..1) of ascending values, nearest rank. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** A row of the table: the benchmark that measured it and its figures. */
export interface BenchRow {
  bench: string;
  result: LoadResult;
}

/** A goal as the table prints it: `p99 < 100 ms`, `ratio ≥ 0.85 of bare fastify`. */
export function goalText(goal: Goal): string {
  switch (goal.figure) {
    case "p50":
    case "p99":
      return `${goal.figure} < ${goal.below} ms`;
    case "rps":
      return `req/s ≥ ${goal.atLeast}`;
    case "ratio":
      return `≥ ${goal.atLeast}× ${goal.of}`;
    case "rssMb":
      return `RSS < ${goal.below} MB`;
  }
}

/**
 * Whether a row met its goal, with the figure judged: `met (0.91×)`, `not met (5,400 ms)`; "-" without a goal.
 * An answer that went wrong fails the goal whatever the figure; so does a figure not measured (NaN, no reference).
 */
export function verdict({ bench, result }: BenchRow, rows: readonly BenchRow[]): string {
  const { goal } = result;
  if (!goal) return "-";
  const reference =
    goal.figure === "ratio" ? rows.find((r) => r.bench === bench && r.result.label === goal.of) : undefined;
  const [value, unit] = figureOf(goal, result, reference);
  const met =
    result.failures === 0 && ("below" in goal ? value < goal.below : value >= goal.atLeast) && Number.isFinite(value);
  const shown = goal.figure === "ratio" ? value.toFixed(2) : Math.round(value).toLocaleString("en");
  return `${met ? "met" : "not met"} (${shown}${unit})`;
}

function figureOf(goal: Goal, result: LoadResult, reference: BenchRow | undefined): [number, string] {
  switch (goal.figure) {
    case "p50":
    case "p99":
      return [result[goal.figure], " ms"];
    case "rps":
      return [result.rps, "/s"];
    case "ratio":
      return [reference ? result.rps / reference.result.rps : NaN, "×"];
    case "rssMb":
      return [result.rssMb ?? NaN, " MB"];
  }
}

export function formatTable(rows: readonly BenchRow[]): string {
  const header = [
    "benchmark",
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU µs/req",
    "requests",
    "failures",
    "goal",
    "verdict",
  ];
  const lines = rows.map((row) => {
    const { bench, result: r } = row;
    return [
      bench,
      r.label,
      r.rps.toFixed(0),
      r.p50.toFixed(2),
      r.p99.toFixed(2),
      r.cpuPerRequest.toFixed(0),
      String(r.requests),
      String(r.failures),
      r.goal ? goalText(r.goal) : "-",
      verdict(row, rows),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  // Text left-aligned (names, goal, verdict), figures right-aligned.
  const left = (i: number) => i < 2 || i >= 8;
  const row = (cells: string[]) =>
    cells
      .map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  return [row(header), row(widths.map((w) => "-".repeat(w))), ...lines.map(row)].join("\n");
}
