import { upToDate, type MikroORM, type ServiceSchema } from "../services/kit/db/orm.js";
import type { Config } from "../services/kit/runtime/config.js";
import type { Logger } from "../services/kit/runtime/logger.js";
import type { ListenPort } from "./ports.js";

/**
 * The start's phase lines, at info level, each with its `phase`: database,
 * nats, migrations (one per service), workers, ports. An operator watching a
 * start sees where it is, and where it stopped; `uptimeMs` (since the process
 * began) shows what loading the code took before the first.
 */
export function phaseLine(logger: Logger, phase: string, fields: object, message: string): void {
  logger.info({ phase, ...fields, uptimeMs: Math.round(performance.now()) }, `${phase}: ${message}`);
}

/** How often a slow phase says it is still running. */
const PROGRESS_EVERY_MS = 5_000;

/** Says every few seconds that `work` still runs (the embedded database's first start takes a while). */
export function progressWhile(work: Promise<unknown>, logger: Logger, phase: string, doing: string): void {
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    phaseLine(logger, phase, { seconds }, `${doing} (${seconds} s so far)`);
  }, PROGRESS_EVERY_MS);
  const done = () => clearInterval(timer);
  work.then(done, done);
}

/** Where a URL points, without its credentials: `127.0.0.1:5432/pf`. */
export function placeOf(url: string): string {
  try {
    const { host, pathname } = new URL(url);
    return `${host}${pathname === "/" ? "" : pathname}`;
  } catch {
    return "(unreadable URL)";
  }
}

/**
 * Logs a service's migrations once its schema is up: how many it has, and how many this start applied. Up to date
 * by what `recordedMigrations` read, the line asks the database nothing more.
 */
export async function migrationsLine(
  logger: Logger,
  key: string,
  orm: MikroORM,
  schema: ServiceSchema,
  since: number,
  recorded: ReadonlySet<string> | undefined,
): Promise<void> {
  const executed =
    recorded && upToDate(schema, recorded)
      ? [...recorded].map((name) => ({ name, executed_at: undefined }))
      : await orm.migrator.getExecuted();
  // Applied by this start: after it began (the database's clock against ours; a skew only miscounts this line).
  const applied = executed
    .filter((row) => row.executed_at && row.executed_at.getTime() >= since)
    .map((row) => row.name);
  const ms = Date.now() - since;
  const committed = schema.migrations.length;
  phaseLine(
    logger,
    "migrations",
    {
      service: key,
      migrations: executed.length,
      applied: applied.length,
      ms,
      ...(applied.length && { names: applied }),
    },
    `${key} at ${executed.length} of ${committed}, ${applied.length} applied now (${ms} ms)`,
  );
}

/**
 * `work` over `items`, at most `atOnce` at a time; the answers in the items' order. A failure is thrown once every
 * item begun has settled (no more begin), so the caller knows all that they opened.
 */
export async function inTurns<T, R>(items: readonly T[], atOnce: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const answers: R[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        answers[i] = await work(items[i]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker));
  if (failure) throw failure.error;
  return answers;
}

/** The ports the platform itself listens on, each with its setting (a service's own ports are its own). */
export function listenPorts(config: Config): ListenPort[] {
  const host = config.bind;
  const ports: ListenPort[] = [{ setting: "PF_RPC_PORT", port: config.rpcPort, host }];
  if (config.gateway) ports.unshift({ setting: "PF_HTTP_PORT", port: config.httpPort, host });
  if (config.metricsPort !== undefined) ports.push({ setting: "PF_METRICS_PORT", port: config.metricsPort, host });
  return ports;
}
