import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { ServiceSchema } from "../db/orm.js";
import type { EventBus } from "../events/bus.js";
import type { Consumer } from "../events/consumer.js";
import type { Implementation } from "../rpc/implementation.js";
import type { RelationResolver } from "../rpc/relations.js";
import type { Clock } from "../runtime/clock.js";
import type { Config } from "../runtime/config.js";
import type { Logger } from "../runtime/logger.js";
import type { ClientKeys } from "../handler/client-address.js";
import type { BlobStore } from "../blobs/store.js";
import type { CommitListeners } from "../db/commits.js";

/** The platform's part of every service's context, built by the host once per service. */
export interface ServiceContext {
  key: string;
  config: Config;
  logger: Logger;
  clock: Clock;
  orm: MikroORM;
  bus: EventBus;
  /** Keyed hashes of client addresses (per-address limits); an address itself is never stored. */
  clientKeys: ClientKeys;
  /** The process's blob store under the service's own prefix (its key): bytes kept outside the database. */
  blobs: BlobStore;
  /**
   * Runs `work` in one short transaction (retried on serialization failures and
   * deadlocks) and, after it commits, tells `commits` what it wrote (the outbox
   * relay, the search relay). Never call another service inside it.
   */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
  /** Relays listening for this service's commits (`kit/db/commits.ts`). */
  commits: CommitListeners;
  /** A typed client for another service, carrying this service's own token. */
  client<S extends DescService>(service: S): Client<S>;
  /** The editors its seed setting names (`PF_<KEY>_EDITORS`, `kit/editors`), read and checked at start. */
  editors: readonly string[];
}

/** Background work a module runs while the host is up (see `leasedJob`); returns how to stop it. */
export type Worker<C extends ServiceContext = ServiceContext> = (ctx: C) => Promise<() => Promise<void>>;

/**
 * What the host needs to run a service. The host builds the service's context
 * once (`context`, from the platform's part) and hands that same object to the
 * handlers, the workers and the consumers.
 */
export interface ServiceModule<C extends ServiceContext = ServiceContext> {
  /** The service key: proto package, Postgres schema, gateway base path, NATS prefix. */
  key: string;
  /** Entities and committed migrations of the service's schema. */
  schema: Omit<ServiceSchema, "key">;
  /** The service's own context: its settings and clients added to the platform's part. */
  context(base: ServiceContext): C | Promise<C>;
  /**
   * The proto services it serves, known without building it: a gateway routes
   * their JSON routes to the process that runs the service (PF_<SERVICE>_URL).
   * `implementations` implements exactly these (the host checks at start).
   */
  protos: readonly DescService[];
  /** The proto services it implements. */
  implementations(ctx: NoInfer<C>): Implementation[];
  /** Capabilities its own token holds for calls to other services. */
  holds?: string[];
  /** Background loops (`workers/`). */
  workers?: Worker<NoInfer<C>>[];
  /** Durable event consumers (`consumers/`), started once the service serves. */
  consumers?: Consumer<NoInfer<C>>[];
  /** The resolvers of the relations its protos declare (`pf.v1.relations`), by name: the kit enforces them (`rpc/relations.ts`). */
  relations?: Readonly<Record<string, RelationResolver<NoInfer<C>>>>;
}

/** A module of any context, as the host and the registry hold them (the host passes each module its own context back). */
export type AnyServiceModule = ServiceModule<any>;

/** Declares a service module, its context type checked against handlers, workers and consumers. */
export function defineService<C extends ServiceContext>(module: ServiceModule<C>): AnyServiceModule {
  return module;
}

/** The context of a service that adds nothing to the platform's part. */
export const baseContext = (base: ServiceContext): ServiceContext => base;
