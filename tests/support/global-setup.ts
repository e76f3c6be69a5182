import { MikroORM } from "@mikro-orm/postgresql";
import { openServiceDatabase } from "../../services/kit/db/orm.js";
import { schemaOf } from "../../services/kit/migrations.js";
import { modules } from "../../platform/registry.js";
import pg from "pg";
import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { serverUrl, TEMPLATE_PREFIX } from "./database.js";

/**
 * With a PostgreSQL server, migrates every service's schema once into a
 * template database that each test file copies. Under CI=true a missing
 * server or NATS fails the run instead of skipping.
 */
export default async function setup(): Promise<(() => Promise<void>) | void> {
  if (process.env.CI === "true" && (!process.env.DATABASE_URL || !process.env.NATS_URL)) {
    throw new Error("CI=true needs DATABASE_URL and NATS_URL: the tests never skip the real servers in CI");
  }
  const url = serverUrl();
  if (!url) return;
  const template = `${TEMPLATE_PREFIX}${process.pid}`;
  // Test files run in workers started after this: they find the template's name here.
  process.env.PF_TEST_TEMPLATE = template;
  await dropAbandonedTemplates(url);
  await adminQuery(url, `drop database if exists ${template} with (force)`);
  await adminQuery(url, `create database ${template}`);
  const orms: MikroORM[] = [];
  try {
    for (const module of modules)
      orms.push(await openServiceDatabase(schemaOf(module), withDatabase(url, template), 1));
  } finally {
    await Promise.all(orms.map((orm) => orm.close()));
  }
  return () => adminQuery(url, `drop database if exists ${template} with (force)`);
}

/** Templates of runs whose process is gone (killed before their teardown), never those of runs still going. */
async function dropAbandonedTemplates(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `select datname from pg_database where datname like '${TEMPLATE_PREFIX}%'`,
    );
    for (const { datname } of rows) {
      const pid = Number(datname.slice(TEMPLATE_PREFIX.length));
      if (Number.isInteger(pid) && !alive(pid)) await client.query(`drop database if exists ${datname} with (force)`);
    }
  } finally {
    await client.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
