import type { MikroORM } from "@mikro-orm/postgresql";
import type { Pool } from "pg";
import { qualified } from "../../kit/db/orm.js";

/** Runs one statement (numbered parameters) on the service's pool, outside any transaction, and answers its rows. */
export type Run = <Row>(sql: string, values: unknown[]) => Promise<Row[]>;

/** The search tables, qualified, and how to run statements on them. */
export interface Tables {
  run: Run;
  documents: string;
  rejections: string;
}

export function tablesOf(orm: MikroORM): Tables {
  let pool: Promise<Pool> | undefined;
  return {
    documents: qualified(orm.em, "documents"),
    rejections: qualified(orm.em, "rejections"),
    run: async <Row>(sql: string, values: unknown[]) => {
      pool ??= orm.em.getConnection().getNativeClient() as Promise<Pool>;
      return (await (await pool).query(sql, values)).rows as Row[];
    },
  };
}

/** What a deadlock answers: the statement is retried once, every writer taking rows in one order makes it rare. */
export function isDeadlock(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: string }).code === "40P01";
}
