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
  return open(schema, pool, owned, undefined);
}

/**
 * `openServiceDatabase` on the process's pool, given what `recordedMigrations` read for the service: with every
 * committed migration among them, the schema is not asked again. Behind, it migrates at once when the caller holds
 * its migration lock (`withMigrationLocks`: services migrating side by side), else under its own.
 */
export function openOnProcessPool(
  schema: ServiceSchema,
  pool: ProcessPool,
  recorded: ReadonlySet<string> | undefined,
  locked: boolean,
): Promise<MikroORM> {
  return open(schema, pool, false, recorded, locked);
}

async function open(
  schema: ServiceSchema,
  pool: ProcessPool,
  owned: boolean,
  recorded: ReadonlySet<string> | undefined,
  locked = false,
): Promise<MikroORM> {
  const options = ormOptions(schema, pool, owned);
  const orm = await MikroORM.init(options).catch(async (error: unknown) => {
    if (owned) await pool.end();
    throw error;
  });
  if (upToDate(schema, recorded ?? (await recordedOf(orm, schema.key)))) return orm;
  const migrate = async () => {
    await orm.em.getConnection().execute(`create schema if not exists "${schema.key}"`);
    await orm.migrator.up();
  };
  await (locked ? migrate() : withMigrationLock(pool.settings.url, schema.key, pool.settings.logger, migrate));
  return orm;
}

/** Whether every committed migration of the schema is among those recorded. */
export function upToDate(schema: ServiceSchema, recorded: ReadonlySet<string>): boolean {
  return schema.migrations.every((migration) => recorded.has(migration.name));
}

/**
 * The migrations every service's schema has recorded, in one statement for all of them: the usual start has nothing
 * to migrate, and needs neither the lock's own connection nor the migrator's several queries per service to find
 * that out. A migration is never unapplied, so no lock is needed to trust a yes. Undefined when a schema has no
 * table yet (a first start, a service added): each service is then asked on its own.
 */
export async function recordedMigrations(
  pool: ProcessPool,
  keys: readonly string[],
): Promise<Map<string, Set<string>> | undefined> {
  if (keys.length === 0) return new Map();
  const union = keys
    .map((key, i) => `select ${i} as service, name from "${key}".mikro_orm_migrations`)
    .join(" union all ");
  const rows = await pool.query<{ service: number; name: string }>(union).then(
    (result) => result.rows,
    () => undefined,
  );
  if (!rows) return undefined;
  const recorded = new Map(keys.map((key) => [key, new Set<string>()]));
  for (const row of rows) recorded.get(keys[row.service])!.add(row.name);
  return recorded;
}

/** One schema's recorded migrations; none when it has no table yet (the migrator then decides under the lock). */
async function recordedOf(orm: MikroORM, key: string): Promise<Set<string>> {
  const rows = await orm.em
    .getConnection()
    .execute<{ name: string }[]>(`select name from "${key}".mikro_orm_migrations`)
    .catch(() => []);
  return new Set(rows.map((row) => row.name));
}
