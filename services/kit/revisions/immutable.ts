import type { EntityManager, TriggerDef } from "@mikro-orm/postgresql";
import { qualified } from "../db/orm.js";
import { sql } from "../db/sql.js";

/**
 * Immutable numbered revisions (README "Revisions"): a service keeps its own
 * revision table (its columns are its own), insert-only under a row trigger,
 * numbered 1, 2, … per parent and unique on (parent, n). A revision with a
 * review state (reviews' summaries) names the state columns that may change;
 * the trigger then refuses only a change of its content, and every delete.
 */

/** What may still change on a revision row: its state columns (SQL names); none when omitted. */
export interface ImmutableOptions {
  mutable?: string[];
}

/** A refused change fails as a check violation. */
const REFUSE = "raise exception 'revisions are immutable' using errcode = '23514';";

/**
 * The trigger body. Without state columns every update and delete fails. With
 * them the row is compared as JSON without those columns, so a column added
 * later is content unless listed; the order they are listed in does not matter.
 */
function bodyOf(options: ImmutableOptions): string {
  const mutable = [...(options.mutable ?? [])].sort();
  if (mutable.length === 0) return REFUSE;
  const content = (row: string) => `to_jsonb(${row}) - '{${mutable.join(",")}}'::text[]`;
  return `if tg_op = 'DELETE' or ${content("new")} is distinct from ${content("old")} then ${REFUSE} end if; return new;`;
}

/** The entity's trigger (MikroORM names its function `{table}_{name}_fn`, as the migration creates it). */
export function immutableTrigger(table: string, options: ImmutableOptions = {}): TriggerDef {
  return {
    name: `${table}_immutable`,
    timing: "before",
    events: ["update", "delete"],
    forEach: "row",
    body: bodyOf(options),
  };
}

/** The migration's statements creating that trigger on `table` (run after the table is created). */
export function immutableTriggerSql(table: string, options: ImmutableOptions = {}): string[] {
  const fn = `${table}_${table}_immutable_fn`;
  return [
    `create function ${fn}() returns trigger as $$ begin ${bodyOf(options)} end; $$ language plpgsql`,
    `create trigger ${table}_immutable before update or delete on ${table} for each row execute function ${fn}()`,
  ];
}

/** Where a service keeps a parent and its revisions. */
export interface RevisionTables {
  /** The parent's table and key column ("posts", "id"). */
  parent: string;
  parentKey?: string;
  /** The revision table, its column naming the parent and its number column ("post_revisions", "post_id", "n"). */
  revisions: string;
  parentColumn: string;
  numberColumn?: string;
}

/**
 * The next revision number of `parentId`, taken under the parent row's lock
 * (held to the end of the caller's transaction, so two writers number one
 * after the other and never collide); undefined when the parent does not exist.
 */
export async function nextRevisionNumber(
  em: EntityManager,
  tables: RevisionTables,
  parentId: string,
): Promise<number | undefined> {
  const parent = qualified(em, tables.parent);
  const revisions = qualified(em, tables.revisions);
  const key = tables.parentKey ?? "id";
  const n = tables.numberColumn ?? "n";
  const locked: unknown[] = await sql(em, `select 1 from ${parent} where ${key} = ? for update`, [parentId]);
  if (locked.length === 0) return undefined;
  const [row]: { next: number }[] = await sql(
    em,
    `select coalesce(max(${n}), 0) + 1 as next from ${revisions} where ${tables.parentColumn} = ?`,
    [parentId],
  );
  return Number(row?.next ?? 1);
}
