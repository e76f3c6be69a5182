import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from "prom-client";
import { poolUse, qualified, type MikroORM } from "../db/orm.js";
import type { EventBus } from "../events/bus.js";
import { RpcMetrics } from "../rpc/metrics.js";
import type { ProcessLabels } from "../runtime/logger.js";

/** How long a scrape waits for one reading (a service's outbox, a consumer's lag): a slow database never hangs it. */
export const READING_DEADLINE_MS = 2_000;

type GaugeName = "backlog" | "oldest" | "lag" | "inUse" | "max" | "waiting";

/** A service whose database and consumers a scrape reads. */
export interface MeteredService {
  key: string;
  orm: MikroORM;
  /** Its durable consumers, by the name and subject the module declares. */
  consumers: readonly { name: string; subject: string }[];
}

/**
 * The platform's Prometheus metrics: its RPCs (counted by the interceptor
 * `rpc.interceptor()`, on every service), and what a scrape reads when it
 * comes: each service's outbox backlog and the age of its oldest unsent event,
 * the lag of each durable consumer, each database pool's use, and the
 * process's own figures (event-loop lag, memory, CPU); the gateway's problem
 * answers (`problem`), and the process's name and PF_SERVICES (`pf_process_info`). One registry per
 * platform, not prom-client's global one: a test process runs several.
 */
export class PlatformMetrics {
  readonly rpc = new RpcMetrics();
  private readonly registry = new Registry();
  private readonly services: MeteredService[] = [];
  /** Readings still running: a scrape while one runs waits for it instead of asking the database again. */
  private readonly reading = new Map<string, Promise<unknown>>();
  private readonly gauges: Record<GaugeName, Gauge<"service" | "consumer">>;
  /** Requests the gateway answered with a problem (a refusal before any RPC, or an RPC's problem). */
  private readonly problems: Counter<"method" | "route" | "status" | "code">;
  private server?: Server;

  constructor(
    private readonly bus: EventBus,
    labels: ProcessLabels,
  ) {
    // Started now, so the first scrape's event-loop figures cover the time since.
    processRegistry();
    for (const family of this.rpc.families()) this.registry.registerMetric(family as unknown as Metric);
    const gauge = (name: string, help: string, labelNames: ("service" | "consumer")[] = ["service"]) =>
      new Gauge({ name, help, labelNames, registers: [this.registry] });
    this.gauges = {
      backlog: gauge(
        "pf_outbox_backlog",
        "Events in the service's outbox not yet published (not set aside as failed).",
      ),
      oldest: gauge(
        "pf_outbox_oldest_age_seconds",
        "Age of the oldest event in the service's outbox not yet published; 0 when none waits.",
      ),
      lag: gauge(
        "pf_consumer_lag",
        "Events a durable consumer has not acknowledged yet: undelivered, or delivered and being applied (NATS only).",
        ["service", "consumer"],
      ),
      // One pool per process, which its services share: each service's series reads the same pool.
      inUse: gauge(
        "pf_db_pool_in_use",
        "Connections of the process's database pool (its services share it) checked out.",
      ),
      max: gauge("pf_db_pool_max", "Size of the process's database pool, which its services share (PF_DB_POOL)."),
      waiting: gauge("pf_db_pool_waiting", "Callers waiting for a connection of the process's database pool."),
    };
    this.problems = new Counter({
      name: "pf_gateway_problems_total",
      help: "Requests the gateway answered with a problem (4xx, 5xx), by route template and problem code.",
      labelNames: ["method", "route", "status", "code"],
      registers: [this.registry],
    });
    new Gauge({
      name: "pf_process_info",
      help: "1, labelled with the process's name (OTEL_SERVICE_NAME) and its PF_SERVICES.",
      labelNames: ["process", "services"],
      registers: [this.registry],
    }).set({ ...labels }, 1);
  }

  /** Counts a request the gateway answered with a problem. */
  problem(answer: { method: string; route: string; status: number; code: string }): void {
    this.problems.inc({ ...answer, status: String(answer.status) });
  }

  /** Adds a service to what scrapes read. */
  watch(service: MeteredService): void {
    this.services.push(service);
  }

  /** The exposition: every reading taken now, within READING_DEADLINE_MS; one not taken in time is left out. */
  async text(): Promise<string> {
    // The pools first: the outbox readings hold a connection of their own.
    await Promise.all(this.services.map((service) => this.readPool(service)));
    await Promise.all(this.services.flatMap((service) => [this.readOutbox(service), ...this.readLags(service)]));
    return Registry.merge([processRegistry(), this.registry]).metrics();
  }

  private async readOutbox({ key, orm }: MeteredService): Promise<void> {
    const labels = { service: key };
    const [row] =
      (await this.take(`outbox ${key}`, () =>
        orm.em.getConnection().execute<{ backlog: number; oldest: number }[]>(
          `select count(*)::float8 as backlog, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest
           from ${qualified(orm.em, "outbox")} where sent_at is null and failed_at is null`,
        ),
      )) ?? [];
    this.put("backlog", labels, row?.backlog);
    this.put("oldest", labels, row?.oldest);
  }

  private async readPool({ key, orm }: MeteredService): Promise<void> {
    const labels = { service: key };
    const use = await this.take(`pool ${key}`, () => poolUse(orm));
    this.put("inUse", labels, use?.inUse);
    this.put("max", labels, use?.max);
    this.put("waiting", labels, use?.waiting);
  }

  private readLags({ key, consumers }: MeteredService): Promise<void>[] {
    const { bus } = this;
    if (!bus.pending) return [];
    return consumers.map(async ({ name, subject }) => {
      // Named as startConsumer names its durable consumer.
      const durable = `${key}_${name}`;
      const lag = await this.take(`lag ${durable}`, () => bus.pending!(subject, durable));
      this.put("lag", { service: key, consumer: durable }, lag);
    });
  }

  /** A reading, or undefined when it failed or did not answer within READING_DEADLINE_MS. */
  private take<T>(name: string, read: () => Promise<T>): Promise<T | undefined> {
    let running = this.reading.get(name) as Promise<T> | undefined;
    if (!running) {
      running = read().finally(() => this.reading.delete(name));
      this.reading.set(name, running);
    }
    return withinDeadline(running);
  }

  /** Sets a gauge, or removes its series when there is no reading: a stale value would look current. */
  private put(gauge: GaugeName, labels: Record<string, string>, value: number | undefined): void {
    if (value === undefined) this.gauges[gauge].remove(labels);
    else this.gauges[gauge].set(labels, value);
  }

  /** Serves `GET /metrics` on its own port (`PF_METRICS_PORT`); answers its URL. */
  async serve(port: number, host: string): Promise<string> {
    const server = createServer((req, res) => {
      const path = (req.url ?? "").split("?")[0];
      if (path !== "/metrics") return void res.writeHead(404).end();
      if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405, { allow: "GET, HEAD" }).end();
      this.text().then(
        (text) => res.writeHead(200, { "content-type": this.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error) =>
        reject(new Error(`PF_METRICS_PORT: cannot serve metrics on ${host}:${port}`, { cause: error })),
      );
      server.listen(port, host, () => {
        server.removeAllListeners("error");
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}/metrics`;
  }

  /** Stops serving, and waits (at most READING_DEADLINE_MS) for readings still running, before the databases close. */
  async stop(): Promise<void> {
    const server = this.server;
    if (server) {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    }
    await withinDeadline(Promise.allSettled(this.reading.values()));
  }
}

/** The process's own metrics (event-loop lag, memory, CPU, GC), made once however many platforms it runs. */
let processMetrics: Registry | undefined;

function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

function withinDeadline<T>(reading: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READING_DEADLINE_MS)));
  return Promise.race([reading.catch(() => undefined), late]).finally(() => clearTimeout(timer));
}
