/**
 * The device agent's command line: `npm run agent -- --pair <code> --url <gateway url>` the first time, then
 * `npm run agent` (the state file remembers the rest). See agent/README.md.
 */
import { parseArgs } from "node:util";
import { isMainThread, parentPort } from "node:worker_threads";
import { pino } from "pino";
import { startAgent } from "./agent.js";
import { defaultStatePath } from "./state.js";

const FLAGS = {
  pair: { type: "string" },
  url: { type: "string" },
  state: { type: "string" },
  name: { type: "string" },
  "work-dir": { type: "string" },
  slots: { type: "string" },
  "max-ttl-ms": { type: "string" },
  "memory-bytes": { type: "string" },
  "output-bytes": { type: "string" },
  "cpu-ms": { type: "string" },
  "log-level": { type: "string", default: "info" },
} as const;

const USAGE = `usage: npm run agent -- [--pair <code> --url <gateway url>] [--state <file>] [--name <name>]
  [--work-dir <folder>] [--slots <n>] [--max-ttl-ms <ms>] [--memory-bytes <n>] [--output-bytes <n>] [--cpu-ms <ms>]
  [--log-level <level>]   (agent/README.md)`;

let values: ReturnType<typeof parseArgs<{ options: typeof FLAGS }>>["values"];
try {
  values = parseArgs({ options: FLAGS, strict: true }).values;
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(64);
}

/** A positive whole number from a flag, if given; anything else refuses the start naming the flag. */
function whole(flag: "slots" | "max-ttl-ms" | "memory-bytes" | "output-bytes" | "cpu-ms"): number | undefined {
  const text = values[flag];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${flag} must be a positive whole number`);
  return value;
}

// In a worker thread its lines go to the thread's stdout, which the platform reads (its pairing is the `link open`
// line): pino's own destination would write to the process's file descriptor past it.
const logger = pino({ name: "pf-agent", level: values["log-level"] }, isMainThread ? undefined : process.stdout);
// Run by `npm start` in a worker thread of the platform (platform/embedded-agent.ts), a message from the platform is
// its SIGTERM: signals reach no thread but the main one. Until the agent has started it ends the thread at once, as the
// signal would end the process.
let stop = (signal: string): void => {
  logger.info({ signal }, "stopping");
  process.exit(0);
};
parentPort?.once("message", () => stop("SIGTERM"));
try {
  const limits = { memoryBytes: whole("memory-bytes"), outputBytes: whole("output-bytes"), cpuMs: whole("cpu-ms") };
  const agent = await startAgent({
    statePath: values.state ?? defaultStatePath(),
    url: values.url,
    pairCode: values.pair,
    name: values.name,
    workRoot: values["work-dir"],
    caps: {
      slots: whole("slots"),
      maxTtlMs: whole("max-ttl-ms"),
      limits: Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined)),
    },
    logger,
  });
  logger.info({ device: agent.deviceId, classes: agent.classes, codeUnavailable: agent.codeUnavailable }, "started");
  stop = (signal: string) => {
    logger.info({ signal }, "stopping");
    void agent.stop().finally(() => process.exit(0));
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
  // Revoked, rotated or refused: nothing more to do with this credential; 2 tells a supervisor not to restart.
  void agent.closed.then(() => agent.stop().finally(() => process.exit(2)));
} catch (error) {
  logger.fatal({ error: (error as Error).message }, "the agent did not start");
  process.exit(1);
}
