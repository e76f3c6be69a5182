import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { randomBytes } from "node:crypto";

/** The test database server: DATABASE_URL when set; otherwise each file runs the embedded PostgreSQL. */
export function serverUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

/**
 * The migrated template of this run: named after the run's process, so two
 * runs on one server (two terminals, helpers side by side) never drop each
 * other's template while the other copies it.
 */
export const TEMPLATE_PREFIX = "pf_test_template_";
export function templateName(): string {
  const name = process.env.PF_TEST_TEMPLATE;
  if (!name) throw new Error("PF_TEST_TEMPLATE is set by the global setup; run the tests through vitest");
  return name;
}

/** A fresh database for one test file, copied from the migrated template. */
export async function createTestDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pf_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(url, `create database ${name} template ${templateName()}`);
  return {
    url: withDatabase(url, name),
    drop: () => adminQuery(url, `drop database if exists ${name} with (force)`),
  };
}
