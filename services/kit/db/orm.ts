import { MikroORM, type EntitySchema, type Options } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";
import { withMigrationLock } from "./migration-lock.js";
import { ProcessPool } from "./pool.js";
import { SharedPoolDriver, type SharedPoolOptions } from "./shared-pool-driver.js";

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

/** A service's ORM options, on the process's pool (`owned`: one opened for this ORM alone, closed with it). */
export function ormOptions(schema: ServiceSchema, pool: ProcessPool, owned = false): Options {
  const shared: SharedPoolOptions = () => ({ processPool: pool, owned });
  return {
    driver: SharedPoolDriver,
    clientUrl: pool.settings.url,
    schema: schema.key,
    entities: schema.entities,
    extensions: [Migrator],
    driverOptions: shared,
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

/**
 * Whether the process's pool is wedged: every connection checked out and none handed
 * out or taken back for `afterMs`. Calls never hold one that long (their
 * statements end at the call's deadline), so only a leak gets there.
 */
export async function poolWedged(orm: MikroORM, afterMs: number): Promise<boolean> {
  const pool = await poolOf(orm);
  const max = pool.options.max ?? 0;
  return pool.totalCount >= max && pool.idleCount === 0 && Date.now() - pool.lastProgress > afterMs;
}

/** The process's pool: its connections checked out, its size, and the callers waiting for a connection. */
export async function poolUse(orm: MikroORM): Promise<{ inUse: number; max: number; waiting: number }> {
  const pool = await poolOf(orm);
  return { inUse: pool.totalCount - pool.idleCount, max: pool.options.max ?? 0, waiting: pool.waiting };
}

function poolOf(orm: MikroORM): Promise<ProcessPool> {
  return orm.em.getConnection().getNativeClient() as Promise<ProcessPool>;
}

/**
 * Opens the service's ORM and brings its schema up to the newest committed migration: on the process's pool, or,
 * given a URL (tools and tests opening one service), on a pool of `poolSize` of its own, closed with the ORM.
 */
export async function openServiceDatabase(
  schema: ServiceSchema,
  database: ProcessPool | string,
  poolSize = 1,
  acquireTimeoutMs = ACQUIRE_TIMEOUT_MS,
): Promise<MikroORM> {
  const owned = typeof database === "string";
  const pool = owned ? new ProcessPool({ url: database, size: poolSize, acquireTimeoutMs }) : database;
  const options = ormOptions(schema, pool, owned);
  const orm = await MikroORM.init(options).catch(async (error: unknown) => {
    if (owned) await pool.end();
    throw error;
  });
  const url = pool.settings.url;
  const committed = (options.migrations?.migrationsList ?? []).map((m) => (m as MigrationObject).name);
  if (await applied(orm, schema.key, committed)) return orm;
  await withMigrationLock(url, schema.key, pool.settings.logger, async () => {
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
