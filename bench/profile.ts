import { Session, type Profiler } from "node:inspector/promises";

/** One function's share of a profile's busy time. */
export interface HotFunction {
  name: string;
  /** file:line, the file's last path segment (the bundle's or a package's). */
  at: string;
  percent: number;
}

/** Profiler frames that are no function of ours: idle time is not CPU, and counts in no share. */
const IDLE = "(idle)";

/**
 * The `top` functions by self time in a V8 CPU profile, each with its share of
 * the busy samples (idle left out; the garbage collector and native code kept:
 * they are CPU the row spent too).
 */
export function topSelfTime(profile: Profiler.Profile, top = 10): HotFunction[] {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map<string, { name: string; at: string; micros: number }>();
  let busy = 0;
  const deltas = profile.timeDeltas ?? [];
  (profile.samples ?? []).forEach((id, i) => {
    const frame = frames.get(id);
    const micros = deltas[i] ?? 0;
    if (!frame || frame.functionName === IDLE) return;
    busy += micros;
    const file = frame.url.split("/").at(-1) ?? "";
    const at = file ? `${file}:${frame.lineNumber + 1}` : "(native)";
    const name = frame.functionName || "(anonymous)";
    const key = `${name} ${at}`;
    const entry = self.get(key) ?? { name, at, micros: 0 };
    entry.micros += micros;
    self.set(key, entry);
  });
  return [...self.values()]
    .sort((a, b) => b.micros - a.micros)
    .slice(0, top)
    .map(({ name, at, micros }) => ({ name, at, percent: busy > 0 ? (100 * micros) / busy : 0 }));
}

/** The summary as printed under the table. */
export function formatProfile(title: string, hot: readonly HotFunction[]): string {
  const lines = hot.map((f) => `  ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.at}`);
  return [`profile of ${title} (self time, this process, measured window):`, ...lines].join("\n");
}

/** Whether BENCH_PROFILE=1 asks for a profile of each measured window. */
export function profiling(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.BENCH_PROFILE === "1";
}

/** The one profiler of the process: windows measured at once (abuse's two loads) profile only the first. */
let busy = false;

/** Starts a CPU profile of this process; its stop answers the summary (undefined if another profile was running). */
export async function startProfile(): Promise<() => Promise<HotFunction[] | undefined>> {
  if (busy) return () => Promise.resolve(undefined);
  busy = true;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    try {
      const { profile } = await session.post("Profiler.stop");
      return topSelfTime(profile);
    } finally {
      session.disconnect();
      busy = false;
    }
  };
}
