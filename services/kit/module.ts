import type { DescService } from "@bufbuild/protobuf";
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import type { ServiceSchema } from "./db/orm.js";
import type { EventBus } from "./events/bus.js";
import type { Consumer } from "./events/consumer.js";
import type { Logger } from "./logger.js";
import { streamsEndOnCancel } from "./rpc/streams.js";

/** One proto service and the object of its methods. */
export interface Implementation {
  service: DescService;
  impl: Partial<ServiceImpl<DescService>>;
}

/**
 * Pairs a proto service with its handlers; `ServiceImpl` makes a forgotten RPC
 * a compile error. Its server-streaming handlers end when their call is cancelled.
 */
export function implement<S extends DescService>(service: S, impl: ServiceImpl<S>): Implementation {
  return { service, impl: streamsEndOnCancel(service, impl) as Partial<ServiceImpl<DescService>> };
}

/** Built once per service from config: everything its handlers and workers use. */
export interface ServiceContext {
  key: string;
  config: Config;
  logger: Logger;
  clock: Clock;
  orm: MikroORM;
  bus: EventBus;
  /**
   * Runs `work` in one short transaction (retried on serialization failures and
   * deadlocks) and wakes the outbox relay after it commits. Never call another
   * service inside it.
   */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
  /** A typed client for another service, carrying this service's own token. */
  client<S extends DescService>(service: S): Client<S>;
}

/** Background work a module runs while the host is up (see `leasedJob`); returns how to stop it. */
export type Worker = (ctx: ServiceContext) => Promise<() => Promise<void>>;

/** What the host needs to run a service. */
export interface ServiceModule {
  /** The service key: proto package, Postgres schema, gateway base path, NATS prefix. */
  key: string;
  /** Entities and committed migrations of the service's schema. */
  schema: Omit<ServiceSchema, "key">;
  /** The proto services it implements. */
  implementations(ctx: ServiceContext): Promise<Implementation[]>;
  /** Capabilities its own token holds for calls to other services. */
  holds?: string[];
  workers?: Worker[];
  /** Durable event consumers, started once the service serves. */
  consumers?: Consumer[];
}
