import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor, Transport } from "@connectrpc/connect";
import { join } from "node:path";
import { buildGateway } from "../gateway/gateway.js";
import { Admission } from "../services/kit/auth/enforce.js";
import { loadKeys, type PlatformKeys } from "../services/kit/auth/keys.js";
import { mintToken, TokenVerifier, type TokenClaims } from "../services/kit/auth/tokens.js";
import { bearer, clientWithDefaults, keyOf, routedTransport, Transports } from "../services/kit/rpc/clients.js";
import { ClientKeys } from "../services/kit/handler/client-address.js";
import { vouchClientAddress } from "../services/kit/rpc/front-door.js";
import { systemClock, type Clock } from "../services/kit/runtime/clock.js";
import type { Config } from "../services/kit/runtime/config.js";
import { startEmbeddedPostgres } from "../services/kit/db/embedded.js";
import { openBlobStore } from "../services/kit/blobs/settings.js";
import { seededEditors } from "../services/kit/editors/editors.js";
import type { BlobStore } from "../services/kit/blobs/store.js";
import { openOnProcessPool, poolWedged, recordedMigrations, upToDate, type MikroORM } from "../services/kit/db/orm.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import { withMigrationLocks } from "../services/kit/db/migration-lock.js";
import { ProcessPool } from "../services/kit/db/pool.js";
import { budgetLine, checkBudget, connectionBudget } from "../services/kit/db/budget.js";
import { schemaOf } from "../services/kit/migrations.js";
import { DatabaseProbe } from "../services/kit/db/readiness.js";
import type { EventBus } from "../services/kit/events/bus.js";
import { JetStreamBus } from "../services/kit/events/jetstream-bus.js";
import { InProcessBus } from "../services/kit/events/memory-bus.js";
import { startConsumer } from "../services/kit/events/consumer.js";
import { eventsCommittedBy, OutboxRelay } from "../services/kit/events/outbox.js";
import { openRelayPool, RELAY_CONNECTIONS } from "../services/kit/events/relay-database.js";
import { CommitListeners, wakesOf } from "../services/kit/db/commits.js";
import { OutboxWakes } from "../services/kit/events/outbox-wake.js";
import { housekeeping } from "../services/kit/service/housekeeping.js";
import { createLogger, processLabels, type Logger } from "../services/kit/runtime/logger.js";
import { PlatformMetrics } from "../services/kit/service/metrics.js";
import type { AnyServiceModule, ServiceContext } from "../services/kit/service/module.js";
import type { Implementation } from "../services/kit/rpc/implementation.js";
import { healthRoutes } from "../services/kit/rpc/health.js";
import { reflectionRoutes } from "../services/kit/rpc/reflection.js";
import { callScope, propagateCall } from "../services/kit/runtime/call.js";
import { CallGuard } from "../services/kit/rpc/guard.js";
import { inputGuard } from "../services/kit/rpc/input.js";
import { renderedFields } from "../services/kit/rich-text/fields.js";
import { RateLimits } from "../services/kit/rpc/rate-limits.js";
import { InFlightLimits } from "../services/kit/rpc/in-flight.js";
import { Relations } from "../services/kit/rpc/relations.js";
import { namespaceClaims } from "../services/kit/rpc/namespaces.js";
import { LocalServices } from "../services/kit/rpc/local-transport.js";
import { serveRpc } from "../services/kit/rpc/server.js";
import { inTransaction } from "../services/kit/db/transaction.js";
import { propagateTrace, traceCalls } from "../services/kit/rpc/tracing.js";
import { flushTracing, tracingFromEnvironment, tracingOn } from "../services/kit/runtime/tracing.js";
import { portRefused, portsFree } from "./ports.js";
import { inTurns, listenPorts, migrationsLine, phaseLine, placeOf, progressWhile } from "./startup.js";

/** Services opened at once at start (ORM, schema check, context): their waits overlap, within the pool. */
const OPENING_AT_ONCE = 4;

export interface PlatformOptions {
  config: Config;
  /** Every module the platform knows; config.services picks which run here. */
  modules: AnyServiceModule[];
  clock?: Clock;
  logger?: Logger;
}

/** A running process: the services it hosts, its RPC server and (optionally) the gateway. */
export interface Platform {
  rpcUrl: string;
  gatewayUrl?: string;
  /** `GET /metrics` on its own port (PF_METRICS_PORT); unset when it is `off`. */
  metricsUrl?: string;
  databaseUrl: string;
  keys: PlatformKeys;
  bus: EventBus;
  contexts: ReadonlyMap<string, ServiceContext>;
  /** The in-memory transport the gateway uses (through every interceptor). */
  transport: Transport;
  mintToken(claims: TokenClaims): Promise<string>;
  /** Reachability of the database and NATS, as /readyz reports it; a check not answered within 2 s is false. */
  readiness(): Promise<Record<string, boolean>>;
  stop(): Promise<void>;
}

export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel, undefined, processLabels(config.services));
  const clock = options.clock ?? systemClock;
  const unknown = (config.services ?? []).filter((key) => !options.modules.some((m) => m.key === key));
  if (unknown.length > 0)
    throw new Error(`PF_SERVICES names services this platform does not have: ${unknown.join(", ")}`);
  const modules = options.modules.filter((m) => !config.services || config.services.includes(m.key));
  const stops: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  try {
    // Before the slow phases: a port another process holds ends the start at once, naming its setting.
    const ports = listenPorts(config);
    await portsFree(ports);
    const started = Date.now();
    // The keys are read while the embedded database starts.
    const starting = config.databaseUrl
      ? undefined
      : startEmbeddedPostgres(join(config.dataDir, "pg"), connectionBudget(config.dbPoolSize).total + 8);
    // Registered at once: a failure below still stops the database, once it has started.
    if (starting) stops.push(() => starting.then((embedded) => embedded.stop()));
    if (starting) {
      const dataDir = join(config.dataDir, "pg");
      phaseLine(
        logger,
        "database",
        { dataDir },
        `DATABASE_URL is unset: starting the embedded PostgreSQL in ${dataDir}`,
      );
      progressWhile(starting, logger, "database", "the embedded PostgreSQL is still starting");
    }
    const [keys, clientKeys, embedded] = await Promise.all([loadKeys(config), ClientKeys.load(config), starting]);
    const admission = new Admission(new TokenVerifier(keys));

    const databaseUrl = embedded?.url ?? config.databaseUrl ?? "";
    phaseLine(
      logger,
      "database",
      { embedded: !!embedded, ms: Date.now() - started },
      embedded ? `the embedded PostgreSQL is up (${Date.now() - started} ms)` : `PostgreSQL at ${placeOf(databaseUrl)}`,
    );

    // One pool for every service of the process, within a budget the server allows (docs/operations.md, "Connections").
    const pool = new ProcessPool({
      url: databaseUrl,
      size: config.dbPoolSize,
      serviceShare: config.dbServiceConnections,
      acquireTimeoutMs: config.dbAcquireTimeoutMs,
      logger,
    });
    stops.push(() => pool.close());
    if (modules.length > 0) {
      const budget = connectionBudget(config.dbPoolSize, embedded ? undefined : { relays: RELAY_CONNECTIONS });
      logger.info({ budget }, budgetLine(budget));
      if (!embedded) await checkBudget(pool, budget);
    }

    const bus: EventBus = config.natsUrl
      ? await JetStreamBus.connect(config.natsUrl, logger, config.natsNamespace)
      : new InProcessBus(logger);
    stops.push(() => bus.close());
    phaseLine(
      logger,
      "nats",
      { namespace: config.natsNamespace },
      config.natsUrl
        ? `connected to ${placeOf(config.natsUrl)}${config.natsNamespace ? ` (namespace ${config.natsNamespace})` : ""}`
        : "NATS_URL is unset: events stay in this process",
    );

    // Every pf service call: in its scope (request id, deadline), counted and kept from leaking internals, enforced, its input checked, rate-limited.
    const guard = new CallGuard(logger);
    // Tracing is decided once per process (OTEL_EXPORTER_OTLP_ENDPOINT); off, its interceptors are left out.
    tracingFromEnvironment();
    const tracing = tracingOn();
    if (tracing) stops.push(flushTracing);
    // Every RPC counted and timed by its final code, outermost; PF_METRICS_PORT=off leaves it out.
    const metrics =
      config.metricsPort === undefined ? undefined : new PlatformMetrics(bus, processLabels(config.services));
    // Each module registers its relations' resolvers once its context is built (below).
    const relations = new Relations(logger);
    const serverInterceptors = [
      ...(metrics ? [metrics.rpc.interceptor()] : []),
      ...(tracing ? [traceCalls()] : []),
      callScope(config.callTimeoutMs),
      guard.interceptor(),
      admission.interceptor(),
      inputGuard(),
      // The relations the admitting rule requires (roles, lists, memberships), resolved on the request read.
      relations.interceptor(),
      // The token's ns claim held to the namespaces the request names (AI workflows).
      namespaceClaims(modules.flatMap((m) => m.protos)),
      // The declared rate limits of the admitted caller, on input the route takes: refused calls count nothing.
      new RateLimits(
        modules.flatMap((m) => m.protos),
        config.env,
        clientKeys,
        clock,
      ).interceptor(),
      // Costly public reads take turns (declared in-flight limits), their Markdown rendering included.
      new InFlightLimits(
        modules.flatMap((m) => m.protos),
        config.env,
      ).interceptor(),
      // Innermost: an answer's Markdown is rendered once its handler (and the handler's transaction) is done.
      renderedFields(),
    ];
    const implementations: Implementation[] = [];
    const local = new LocalServices();
    const routes = (router: ConnectRouter) => {
      for (const { service, impl } of implementations)
        router.service(service, impl, { interceptors: serverInterceptors });
      healthRoutes(
        router,
        implementations.map((i) => i.service),
      );
      reflectionRoutes(
        router,
        implementations.map((i) => i.service),
        admission,
      );
    };
    const localKeys = new Set(modules.map((m) => m.key));
    const localTransport = (interceptors: Interceptor[]) => local.transport(interceptors);

    // One blob store per process; each service sees it under its own key.
    const blobs = openBlobStore(config);
    const contexts = new Map<string, ServiceContext>();
    const orms: MikroORM[] = [];
    const relays: OutboxRelay[] = [];
    // One LISTEN connection per process wakes every relay for other processes' commits; the embedded database is one process.
    const wakes = config.databaseUrl ? new OutboxWakes(databaseUrl, logger) : undefined;
    // Ended after the relays stop (stops run last-first).
    const relayPool = config.databaseUrl ? openRelayPool(databaseUrl, logger) : undefined;
    if (relayPool) stops.push(() => relayPool.end());
    // Every service's recorded migrations in one statement; then the services open a few at a time, each with its
    // context, those behind migrating side by side under their locks (one connection), and start in their order.
    const recorded = await recordedMigrations(
      pool,
      modules.map((m) => m.key),
    );
    const behind = new Set(
      modules.filter((m) => !recorded?.get(m.key) || !upToDate(schemaOf(m), recorded.get(m.key)!)).map((m) => m.key),
    );
    const openAll = () =>
      inTurns(modules, OPENING_AT_ONCE, async (module) => {
        const migrating = Date.now();
        const schema = schemaOf(module);
        const orm = await openOnProcessPool(schema, pool, recorded?.get(module.key), behind.has(module.key));
        orms.push(orm);
        stops.push(() => orm.close());
        await migrationsLine(logger, module.key, orm, schema, migrating, recorded?.get(module.key));
        await bus.ensureStream(module.key);
        const relay = new OutboxRelay(orm, bus, logger.child({ service: module.key, relay: true }), module.key, {
          intervalMs: config.outboxPollMs,
          wakes,
          pool: relayPool,
        });
        const callerInterceptors = [
          propagateCall(),
          ...(tracing ? [propagateTrace()] : []),
          bearer(serviceToken(keys, module)),
        ];
        const transports = new Transports(
          localTransport(callerInterceptors),
          localKeys,
          config.serviceUrls,
          callerInterceptors,
        );
        // The service's context is built once here; its handlers, workers and consumers share it.
        const ctx = await module.context(
          serviceContext({ module, config, logger, clock, orm, bus, clientKeys, relay, transports, blobs }),
        );
        return { module, orm, relay, ctx };
      });
    const opened =
      behind.size > 0 ? await withMigrationLocks(databaseUrl, [...behind], logger, openAll) : await openAll();
    const background = { workers: 0, consumers: 0 };
    for (const { module, relay, ctx } of opened) {
      relays.push(relay);
      contexts.set(module.key, ctx);
      relations.register(module.protos, module.relations ?? {}, ctx);
      for (const implementation of servedAsDeclared(module, module.implementations(ctx))) {
        implementations.push(implementation);
        local.add(implementation, serverInterceptors);
      }
    }
    // Workers and consumers once every service answers in process: one calling another at its start finds it.
    for (const { module, orm, ctx } of opened) {
      for (const worker of [housekeeping, ...(module.workers ?? [])]) stops.push(await worker(ctx));
      for (const definition of module.consumers ?? []) stops.push(await startConsumer(ctx, definition));
      background.workers += 1 + (module.workers?.length ?? 0);
      background.consumers += module.consumers?.length ?? 0;
      metrics?.watch({ key: module.key, orm, consumers: module.consumers ?? [] });
    }

    // Relays start once every consumer listens, and stop before any consumer does.
    for (const relay of relays) {
      relay.start();
      stops.push(() => relay.stop());
    }
    if (wakes) {
      await wakes.start();
      stops.push(() => wakes.stop());
    }
    phaseLine(
      logger,
      "workers",
      background,
      `${background.workers} workers, ${background.consumers} consumers and ${relays.length} outbox relays started`,
    );

    // Stops run last-first: the servers below stop taking calls, the calls being served finish
    // and answer, then the remaining connections close, and only then the databases.
    const transport = localTransport([]);
    const rpc = await serveRpc(routes, {
      port: config.rpcPort,
      host: config.bind,
      readMaxBytes: config.bodyLimit,
      bodyTimeoutMs: config.bodyTimeoutMs,
      clientKeys,
      admitting: { services: implementations.map((i) => i.service), admission },
      refused: metrics && ((method, error, started) => metrics.rpc.count(method, error.code, started)),
    });
    stops.push(() => rpc.close());
    stops.push(() => guard.drained(config.callTimeoutMs));
    stops.push(() => rpc.stopAccepting());

    // Asked on a connection of its own, never queued behind the services' pools (a process without services has none).
    const probe = new DatabaseProbe(databaseUrl);
    stops.push(() => probe.stop());
    // Its connection opened while the gateway is built: the first /readyz finds it.
    if (orms.length > 0) void probe.answers();
    const readiness = async () => ({
      database: orms.length === 0 || (await probe.answers()),
      nats: bus.connected(),
    });
    // A service is live unless its pool is wedged (a call holds a connection at most until its deadline).
    const liveness = async () => {
      const services = [...contexts].map(async ([key, ctx]) => [
        key,
        !(await poolWedged(ctx.orm, 2 * config.callTimeoutMs)),
      ]);
      return Object.fromEntries(await Promise.all(services)) as Record<string, boolean>;
    };

    let gatewayUrl: string | undefined;
    if (config.gateway) {
      // Its own process's services in memory; the others' over gRPC where their URL is set, the client's address vouched for.
      const remote = options.modules.filter((m) => !localKeys.has(m.key) && config.serviceUrls[m.key]);
      const services: DescService[] = [...implementations.map((i) => i.service), ...remote.flatMap((m) => m.protos)];
      const gateway = await buildGateway({
        services,
        transport: routedTransport(
          new Transports(transport, localKeys, config.serviceUrls, [vouchClientAddress(clientKeys)]),
        ),
        admission,
        config,
        logger,
        readiness,
        liveness,
        problems: metrics && ((answer) => metrics.problem(answer)),
        // The same handlers as the RPC port, through the same interceptors: Connect and gRPC-Web for browsers.
        connect: { implementations, interceptors: serverInterceptors },
      });
      // Taken since the check at start (a race): still named by its setting.
      gatewayUrl = await gateway.listen({ port: config.httpPort, host: config.bind }).catch((error: unknown) => {
        throw portRefused({ setting: "PF_HTTP_PORT", port: config.httpPort, host: config.bind }, error);
      });
      stops.push(() => gateway.close());
    }
    // Stopped first: a scrape's readings finish before the databases close.
    const metricsUrl = metrics && (await metrics.serve(config.metricsPort!, config.bind));
    if (metrics) stops.push(() => metrics.stop());
    phaseLine(
      logger,
      "ports",
      { gateway: gatewayUrl, rpc: rpc.url, metrics: metricsUrl, ms: Date.now() - started },
      `gateway ${gatewayUrl ?? "(off)"}, RPC ${rpc.url}, metrics ${metricsUrl ?? "(off)"}`,
    );

    return {
      rpcUrl: rpc.url,
      gatewayUrl,
      metricsUrl,
      databaseUrl,
      keys,
      bus,
      contexts,
      transport,
      mintToken: (claims) => mintToken(keys, claims),
      readiness,
      // A second signal while stopping waits for the same stop.
      stop: () => (stopping ??= stopAll(stops)),
    };
  } catch (error) {
    await stopAll(stops);
    throw error;
  }
}

/** The implementations of a module, which must be exactly the proto services it declares (`protos`). */
function servedAsDeclared(module: AnyServiceModule, built: Implementation[]): Implementation[] {
  const names = (services: readonly DescService[]) =>
    services
      .map((s) => s.typeName)
      .sort()
      .join(", ");
  const declared = names(module.protos);
  const implemented = names(built.map((i) => i.service));
  if (declared !== implemented)
    throw new Error(`${module.key} declares protos ${declared} but implements ${implemented}`);
  return built;
}

/** Everything a service's handlers and workers use, built once. */
function serviceContext(parts: {
  module: AnyServiceModule;
  config: Config;
  logger: Logger;
  clock: Clock;
  orm: MikroORM;
  bus: EventBus;
  clientKeys: ClientKeys;
  relay: OutboxRelay;
  transports: Transports;
  blobs: BlobStore;
}): ServiceContext {
  const { module, config, orm, relay, transports } = parts;
  const commits = new CommitListeners();
  commits.on("events", (em) => relay.committed(eventsCommittedBy(em)));
  return {
    key: module.key,
    config,
    logger: parts.logger.child({ service: module.key }),
    clock: parts.clock,
    orm,
    bus: parts.bus,
    clientKeys: parts.clientKeys,
    blobs: parts.blobs.scoped(module.key),
    commits,
    transaction: async (work) => {
      // The transaction that committed (a retry runs on a fresh one).
      let committed: EntityManager | undefined;
      const result = await inTransaction(orm, (em) => {
        committed = em;
        return work(em);
      });
      commits.committed(committed!);
      for (const wake of wakesOf(committed!)) wake();
      return result;
    },
    client: (service) =>
      clientWithDefaults(service, transports.for(keyOf(service)), { timeoutMs: config.callTimeoutMs }),
    // A bad entry stops the start naming the setting, never a 500 on every request that reads it.
    editors: seededEditors(config, module.key),
  };
}

/** The service's own token, re-minted before it expires. */
function serviceToken(keys: PlatformKeys, module: AnyServiceModule): () => Promise<string> {
  let current: { token: string; renewAt: number } | undefined;
  return async () => {
    if (!current || Date.now() > current.renewAt) {
      const token = await mintToken(keys, { kind: "service", svc: module.key, caps: module.holds ?? [], ttl: 3600 });
      current = { token, renewAt: Date.now() + 50 * 60_000 };
    }
    return current.token;
  };
}

async function stopAll(stops: (() => Promise<void>)[]): Promise<void> {
  for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
}
