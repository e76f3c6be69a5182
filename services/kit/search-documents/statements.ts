import type { MikroORM } from "@mikro-orm/postgresql";
import { qualified } from "../db/orm.js";

/** Runs one statement (numbered parameters) outside any transaction on the service's pool and answers its rows. */
export type Statement = <Row>(sql: string, params: unknown[]) => Promise<Row[]>;

/** The relay's and reconciliation's statements, and the table they name. */
export function statementsOf(orm: MikroORM): { run: Statement; table: string } {
  return {
    table: qualified(orm.em, "search_documents"),
    run: async <Row>(sql: string, params: unknown[]) => {
      const pool = await orm.em.getConnection().getNativeClient();
      return (await pool.query(sql, params)).rows as Row[];
    },
  };
}
