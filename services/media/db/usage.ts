import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

/** What a namespace holds against its quota. */
export interface Usage {
  bytes: number;
  files: number;
}

const run = (em: EntityManager, sql: string, params: unknown[]) =>
  em.getConnection().execute<Record<string, string>[]>(sql, params, "all", em.getTransactionContext());

/**
 * A namespace's usage, its row locked to the end of the caller's transaction: reservations of one namespace are
 * decided one after the other, so two uploads never both take what is left. Always taken before an upload's row.
 */
export async function lockUsage(em: EntityManager, app: string): Promise<Usage> {
  const table = qualified(em, "app_usage");
  await run(em, `insert into ${table} (app, bytes, files) values (?, 0, 0) on conflict (app) do nothing`, [app]);
  const [row] = await run(em, `select bytes, files from ${table} where app = ? for update`, [app]);
  return { bytes: Number(row.bytes), files: Number(row.files) };
}

/** Adds to (or, negative, takes from) a namespace's usage, whose row the caller locked. */
export async function addUsage(em: EntityManager, app: string, bytes: number, files: number): Promise<void> {
  await run(em, `update ${qualified(em, "app_usage")} set bytes = bytes + ?, files = files + ? where app = ?`, [
    bytes,
    files,
    app,
  ]);
}

/** Records an upload under way, before its first byte is stored. */
export async function insertUpload(
  em: EntityManager,
  upload: { key: string; app: string; reserved: number; at: Date },
): Promise<void> {
  await run(em, `insert into ${qualified(em, "uploads")} (key, app, reserved, touched_at) values (?, ?, ?, ?)`, [
    upload.key,
    upload.app,
    upload.reserved,
    upload.at,
  ]);
}

/** Adds to an upload's reservation and marks it alive; false when the sweep abandoned it. */
export async function reserveMore(em: EntityManager, key: string, bytes: number, at: Date): Promise<boolean> {
  const rows = await run(
    em,
    `update ${qualified(em, "uploads")} set reserved = reserved + ?, touched_at = ?
     where key = ? and not abandoned returning key`,
    [bytes, at, key],
  );
  return rows.length === 1;
}

/** Ends an upload that was not abandoned, answering what it reserved; undefined when the sweep took it over. */
export async function takeUpload(em: EntityManager, key: string): Promise<number | undefined> {
  const [row] = await run(
    em,
    `delete from ${qualified(em, "uploads")} where key = ? and not abandoned returning reserved`,
    [key],
  );
  return row && Number(row.reserved);
}

/** Marks uploads untouched since `before` abandoned: none of them can reserve or settle any more. */
export async function abandonUploads(em: EntityManager, before: Date): Promise<void> {
  await run(em, `update ${qualified(em, "uploads")} set abandoned = true where touched_at < ? and not abandoned`, [
    before,
  ]);
}

/** Up to `limit` abandoned uploads, whose blobs the sweep removes. */
export async function abandonedUploads(em: EntityManager, limit: number): Promise<{ key: string; app: string }[]> {
  const rows = await run(em, `select key, app from ${qualified(em, "uploads")} where abandoned limit ?`, [limit]);
  return rows.map((row) => ({ key: row.key, app: row.app }));
}

/** Removes an abandoned upload whose blob is gone, answering what it reserved (undefined when already removed). */
export async function dropAbandoned(em: EntityManager, key: string): Promise<number | undefined> {
  const [row] = await run(
    em,
    `delete from ${qualified(em, "uploads")} where key = ? and abandoned returning reserved`,
    [key],
  );
  return row && Number(row.reserved);
}
