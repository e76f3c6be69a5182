import { afterAll, beforeAll, expect } from "vitest";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openServiceDatabase, type MikroORM } from "../../services/kit/db/orm.js";
import { KIT_MIGRATIONS, schemaOf } from "../../services/kit/migrations.js";
import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { modules } from "../../platform/registry.js";
import { serverUrl } from "../support/database.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";

describeWith(DATABASE_SERVER, "three instances starting at once on an empty database", () => {
  // Read in the hooks, not while collecting: without DATABASE_URL the block is collected and skipped.
  const name = `pf_test_${randomBytes(6).toString("hex")}`;
  const server = () => serverUrl()!;
  const url = () => withDatabase(server(), name);
  const orms: MikroORM[] = [];

  beforeAll(() => adminQuery(server(), `create database ${name}`));
  afterAll(async () => {
    await Promise.all(orms.map((orm) => orm.close()));
    await adminQuery(server(), `drop database if exists ${name} with (force)`);
  });

  /** One instance's start: every service's schema, one after the other, as the host opens them. */
  async function start(): Promise<void> {
    for (const module of modules) orms.push(await openServiceDatabase(schemaOf(module), url(), 2));
  }

  itWith(DATABASE_SERVER, "all start, and each schema is migrated once", async () => {
    const started = await Promise.allSettled([start(), start(), start()]);
    expect(started.filter((s) => s.status === "rejected")).toEqual([]);

    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      for (const module of modules) {
        const { rows } = await client.query<{ name: string }>(
          `select name from "${module.key}".mikro_orm_migrations order by id`,
        );
        expect(rows.map((r) => r.name)).toEqual([...KIT_MIGRATIONS, ...module.schema.migrations].map((m) => m.name));
      }
    } finally {
      await client.end();
    }
  });
});
