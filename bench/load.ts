import { fork } from "node:child_process";

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
}

/** What the child measures; the rest is added here. */
export type LoadFigures = Omit<LoadResult, "label" | "cpuPerRequest">;

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
  return new Promise((resolve, reject) => {
    child.on("message", (message: ChildMessage) => {
      if (message.kind === "measuring") {
        cpu = process.cpuUsage();
        return;
      }
      const { user, system } = process.cpuUsage(cpu);
      const { figures } = message;
      resolve({ label, ...figures, cpuPerRequest: figures.requests > 0 ? (user + system) / figures.requests : NaN });
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

export function formatTable(rows: { bench: string; result: LoadResult }[]): string {
  const header = ["benchmark", "target", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "requests", "failures"];
  const lines = rows.map(({ bench, result: r }) => [
    bench,
    r.label,
    r.rps.toFixed(0),
    r.p50.toFixed(2),
    r.p99.toFixed(2),
    r.cpuPerRequest.toFixed(0),
    String(r.requests),
    String(r.failures),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [row(header), row(widths.map((w) => "-".repeat(w))), ...lines.map(row)].join("\n");
}
