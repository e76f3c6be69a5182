import type { MikroORM } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";
import { statement } from "../../kit/db/reads.js";

/** Runs one statement (numbered parameters) on the service's pool, outside any transaction, and answers its rows. */
export type Run = <Row>(sql: string, values: unknown[]) => Promise<Row[]>;

/** The search tables, qualified, and how to run statements on them (the kit's `statement`: no pool of its own). */
export interface Tables {
  run: Run;
  documents: string;
  rejections: string;
}

export function tablesOf(orm: MikroORM): Tables {
  return {
    documents: qualified(orm.em, "documents"),
    rejections: qualified(orm.em, "rejections"),
    run: <Row>(sql: string, values: unknown[]) => statement<Row>(orm, sql, values),
  };
}

/** What a deadlock answers: the statement is retried once, every writer taking rows in one order makes it rare. */
export function isDeadlock(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: string }).code === "40P01";
}
