import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../db/sql.js";
import { HotRead, type ReadContext } from "../db/reads.js";

/** One row of a service's `editors` table (`kit-editors-migration.ts`). */
export interface EditorRow {
  subject: string;
  addedBy: string;
  addedAt: Date;
}

const listed = new HotRead<{ subject: string }, [string]>(
  "kit.editor_listed",
  `select subject from {editors} where subject = $1`,
);

/** Whether the person is on the service's editor list (its table; the seed setting is `editors.ts`'s). */
export async function isListedEditor(ctx: ReadContext, subject: string): Promise<boolean> {
  return (await listed.run(ctx, subject)).length > 0;
}

/** Puts a person on the list; a person already on it keeps their first entry. Answers the entry. */
export async function addEditor(em: EntityManager, subject: string, addedBy: string, at: Date): Promise<EditorRow> {
  await sql(
    em,
    `insert into {editors} (subject, added_by, added_at) values (?, ?, ?) on conflict (subject) do nothing`,
    [subject, addedBy, at],
  );
  const rows = await selectEditors(em, `where subject = ?`, [subject]);
  return rows[0];
}

/** Takes a person off the list; false when they were not on it. */
export async function removeEditor(em: EntityManager, subject: string): Promise<boolean> {
  const removed = await sql<{ subject: string }>(em, `delete from {editors} where subject = ? returning subject`, [
    subject,
  ]);
  return removed.length > 0;
}

/** The whole list, oldest first. */
export function listEditors(em: EntityManager): Promise<EditorRow[]> {
  return selectEditors(em, "", []);
}

async function selectEditors(em: EntityManager, where: string, values: unknown[]): Promise<EditorRow[]> {
  const rows = await sql<{ subject: string; added_by: string; added_at: Date | string }>(
    em,
    `select subject, added_by, added_at from {editors} ${where} order by added_at, subject`,
    values,
  );
  return rows.map((row) => ({ subject: row.subject, addedBy: row.added_by, addedAt: new Date(row.added_at) }));
}
