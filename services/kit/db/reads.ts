import type { Pool } from "pg";
import type { Config } from "../runtime/config.js";
import type { MikroORM } from "./orm.js";

/**
 * What a hot read runs on: the service's ORM (its pool and schema) and whether the database is the embedded one.
 * A service's context is one; named here, not taken from `service/module.ts`, which stands above `db/`.
 */
export interface ReadContext {
  orm: MikroORM;
  config: Pick<Config, "databaseUrl">;
}

/** How one service's pool runs a read: its statement text, and whether it is prepared by name. */
interface Prepared {
  readonly pool: Pool;
  readonly text: string;
  readonly name: string | undefined;
}

/**
 * A hot read: one SQL statement of the service's own schema, written once,
 * run on the service's `pg` pool (the one MikroORM opened) with `$1…`
 * parameters and answered as plain rows, the typed shape the caller maps to
 * its proto message. On PostgreSQL it is a named prepared statement, parsed
 * and planned once per connection. MikroORM's query building, identity map
 * and hydration cost ~20 times the query itself on a read route; this costs
 * what `pg` does.
 *
 * For reads outside a transaction only (a read in one is the kit's
 * `sql(em, text, params)`, which sees the transaction's writes). Table
 * names in `sql` are `{table}`, qualified with the service's schema: never
 * rely on search_path (the embedded PostgreSQL is one session for every
 * service, which is also why it gets unnamed statements there: one name
 * prepared by two pool connections would collide).
 */
export class HotRead<Row extends object, Params extends unknown[]> {
  private readonly prepared = new WeakMap<ReadContext["orm"], Prepared | Promise<Prepared>>();

  /** `name`: unique within the service, e.g. "identity.subject"; `sql` names tables as `{subjects}`. */
  constructor(
    readonly name: string,
    private readonly sql: string,
  ) {}

  async run(ctx: ReadContext, ...values: Params): Promise<Row[]> {
    let found = this.prepared.get(ctx.orm);
    if (found === undefined) {
      found = this.prepare(ctx);
      this.prepared.set(ctx.orm, found);
    }
    const { pool, text, name } = found instanceof Promise ? await found : found;
    const result = await pool.query<Row>({ name, text, values });
    return result.rows;
  }

  private async prepare(ctx: ReadContext): Promise<Prepared> {
    const pool = await poolOf(ctx.orm);
    const text = qualifiedText(ctx.orm, this.sql);
    // The embedded database (no DATABASE_URL) shares one session between connections: unnamed statements there.
    const schema = String(ctx.orm.config.get("schema"));
    const prepared = { pool, text, name: ctx.config.databaseUrl ? `pf.${schema}.${this.name}` : undefined };
    this.prepared.set(ctx.orm, prepared);
    return prepared;
  }
}

/**
 * One statement of its own, outside any transaction, whose text is built per call (search's queries and its
 * one-statement upsert): on the same pool as a `HotRead`, unprepared, `$1…` parameters, `{table}` qualified.
 */
export async function statement<Row>(orm: MikroORM, text: string, values: unknown[]): Promise<Row[]> {
  const pool = await poolOf(orm);
  return (await pool.query(qualifiedText(orm, text), values)).rows as Row[];
}

/** The service's `pg` pool: the one MikroORM opened; no service opens or holds one of its own. */
function poolOf(orm: MikroORM): Promise<Pool> {
  return orm.em.getConnection().getNativeClient() as Promise<Pool>;
}

function qualifiedText(orm: MikroORM, text: string): string {
  const schema = String(orm.config.get("schema"));
  return text.replace(/\{([a-z_]+)\}/g, (_match, table: string) => `"${schema}".${table}`);
}
