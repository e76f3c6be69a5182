import { MikroORM, type EntitySchema, type Options } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";
import { kitMigration } from "./kit-migration.js";
import { kitRateLimitsMigration } from "./kit-rate-limits-migration.js";

export { MikroORM };

/** What a service hands the kit for its schema. */
export interface ServiceSchema {
  /** The Postgres schema: the service key. */
  key: string;
  // MikroORM's own signature takes entity schemas of any shape.

  entities: EntitySchema<any, any>[];
  /** Committed migrations, oldest first; the kit's tables come before them. */
  migrations: MigrationObject[];
}

export function ormOptions(schema: ServiceSchema, url: string, poolSize: number): Options {
  return {
    clientUrl: url,
    schema: schema.key,
    entities: schema.entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolSize },
    migrations: {
      schema: schema.key,
      tableName: "mikro_orm_migrations",
      migrationsList: [kitMigration, kitRateLimitsMigration, ...schema.migrations],
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

/** Opens the service's ORM and brings its schema up to the newest committed migration. */
export async function openServiceDatabase(schema: ServiceSchema, url: string, poolSize: number): Promise<MikroORM> {
  const orm = await MikroORM.init(ormOptions(schema, url, poolSize));
  await orm.em.getConnection().execute(`create schema if not exists "${schema.key}"`);
  await orm.migrator.up();
  return orm;
}
