import { MikroORM } from "@mikro-orm/postgresql";
import { openServiceDatabase } from "../../services/kit/db/orm.js";
import { modules } from "../../services/registry.js";
import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { serverUrl, TEMPLATE } from "./database.js";

/**
 * With a PostgreSQL server, migrates every service's schema once into a
 * template database that each test file copies. Under CI=true a missing
 * server or NATS fails the run instead of skipping.
 */
export default async function setup(): Promise<void> {
  if (process.env.CI === "true" && (!process.env.DATABASE_URL || !process.env.NATS_URL)) {
    throw new Error("CI=true needs DATABASE_URL and NATS_URL: the tests never skip the real servers in CI");
  }
  const url = serverUrl();
  if (!url) return;
  await adminQuery(url, `drop database if exists ${TEMPLATE} with (force)`);
  await adminQuery(url, `create database ${TEMPLATE}`);
  const orms: MikroORM[] = [];
  try {
    for (const module of modules) orms.push(await openServiceDatabase({ key: module.key, ...module.schema }, withDatabase(url, TEMPLATE), 1));
  } finally {
    await Promise.all(orms.map((orm) => orm.close()));
  }
}
