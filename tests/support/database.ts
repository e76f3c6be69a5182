import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { randomBytes } from "node:crypto";

/** The test database server: DATABASE_URL when set; otherwise each file runs the embedded PostgreSQL. */
export function serverUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

export const TEMPLATE = "pf_test_template";

/** A fresh database for one test file, copied from the migrated template. */
export async function createTestDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pf_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(url, `create database ${name} template ${TEMPLATE}`);
  return {
    url: withDatabase(url, name),
    drop: () => adminQuery(url, `drop database if exists ${name} with (force)`),
  };
}
