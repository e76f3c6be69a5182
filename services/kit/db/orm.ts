import { MikroORM, type EntitySchema, type Options } from "@mikro-orm/postgresql";
import type { Pool, PoolClient } from "pg";
import { Migrator } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";
import { withMigrationLock } from "./migration-lock.js";

export { MikroORM };

/** What a service hands the kit for its schema. */
export interface ServiceSchema {
  /** The Postgres schema: the service key. */
  key: string;
  // MikroORM's own signature takes entity schemas of any shape.

  entities: EntitySchema<any, any>[];
  /** Every committed migration, oldest first: the kit's tables', then the service's (`schemaOf`, kit/migrations.ts). */
  migrations: MigrationObject[];
}

/** How long a caller waits for a free connection by default (PF_DB_ACQUIRE_TIMEOUT_MS). */
const ACQUIRE_TIMEOUT_MS = 5_000;

export function ormOptions(
  schema: ServiceSchema,
  url: string,
  poolSize: number,
  acquireTimeoutMs = ACQUIRE_TIMEOUT_MS,
): Options {
  return {
    clientUrl: url,
    schema: schema.key,
    entities: schema.entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolSize },
    // pg's pool bounds both the wait for a free connection and the opening of a new one by it.
    driverOptions: { connectionTimeoutMillis: acquireTimeoutMs, onPoolCreated: watchPool },
    migrations: {
      schema: schema.key,
      tableName: "mikro_orm_migrations",
      migrationsList: schema.migrations,
      snapshot: false,
      transactional: true,
      silent: true,
    },
    allowGlobalContext: false,
    debug: false,
  };
}

/**
 * A table of the service's schema, for raw SQL. Never rely on search_path: the
 * embedded PostgreSQL is one session shared by every service.
 */
export function qualified(em: { config: { get(key: "schema"): string | undefined } }, table: string): string {
  return `"${String(em.config.get("schema"))}".${table}`;
}

/** When each pool last handed out or took back a connection. */
const progress = new WeakMap<Pool, number>();

/**
 * A connection the server closed while checked out goes back to the pool
 * (which discards it) at once. Kysely gives a transaction's connection back
 * only once its COMMIT or ROLLBACK succeeds, which never happens on a
 * terminated connection: without this, every terminated backend would hold
 * a pool slot for good. The holder's own later release becomes a no-op.
 */
function watchPool(pool: Pool): void {
  const checkedOut = new WeakSet<PoolClient>();
  progress.set(pool, Date.now());
  pool.on("connect", (client) => {
    client.once("end", () => {
      if (!checkedOut.has(client)) return;
      const release = client.release.bind(client);
      client.release = () => undefined;
      release(new Error("the database closed the connection"));
    });
  });
  pool.on("acquire", (client) => {
    checkedOut.add(client);
    progress.set(pool, Date.now());
  });
  pool.on("release", (_error, client) => {
    checkedOut.delete(client);
    progress.set(pool, Date.now());
  });
}

/**
 * Whether the pool is wedged: every connection checked out and none handed
 * out or taken back for `afterMs`. Calls never hold one that long (their
 * statements end at the call's deadline), so only a leak gets there.
 */
export async function poolWedged(orm: MikroORM, afterMs: number): Promise<boolean> {
  const pool = await orm.em.getConnection().getNativeClient();
  const max = pool.options.max ?? 0;
  return pool.totalCount >= max && pool.idleCount === 0 && Date.now() - (progress.get(pool) ?? 0) > afterMs;
}

/** The pool's connections checked out, its size, and the callers waiting for a connection (pg's own counters). */
export async function poolUse(orm: MikroORM): Promise<{ inUse: number; max: number; waiting: number }> {
  const pool = await orm.em.getConnection().getNativeClient();
  return { inUse: pool.totalCount - pool.idleCount, max: pool.options.max ?? 0, waiting: pool.waitingCount };
}

/** Opens the service's ORM and brings its schema up to the newest committed migration. */
export async function openServiceDatabase(
  schema: ServiceSchema,
  url: string,
  poolSize: number,
  acquireTimeoutMs = ACQUIRE_TIMEOUT_MS,
): Promise<MikroORM> {
  const options = ormOptions(schema, url, poolSize, acquireTimeoutMs);
  const orm = await MikroORM.init(options);
  const committed = (options.migrations?.migrationsList ?? []).map((m) => (m as MigrationObject).name);
  if (await applied(orm, schema.key, committed)) return orm;
  await withMigrationLock(url, schema.key, async () => {
    await orm.em.getConnection().execute(`create schema if not exists "${schema.key}"`);
    await orm.migrator.up();
  });
  return orm;
}

/**
 * Whether every committed migration is applied already, by one query: the usual
 * start has nothing to migrate, and needs neither the lock's own connection nor
 * the migrator's several queries to find that out. A migration is never
 * unapplied, so no lock is needed to trust a yes; on any doubt (no table yet)
 * the migrator decides under the lock.
 */
async function applied(orm: MikroORM, key: string, committed: string[]): Promise<boolean> {
  const rows = await orm.em
    .getConnection()
    .execute<{ name: string }[]>(`select name from "${key}".mikro_orm_migrations`)
    .catch(() => []);
  const names = new Set(rows.map((row) => row.name));
  return committed.every((name) => names.has(name));
}
