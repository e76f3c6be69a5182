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
  /** Whether the RUM index of facet pairs by time is there (Migration20270105000000): asked once, then known. */
  ordersFacets: () => Promise<boolean>;
}

export function tablesOf(orm: MikroORM): Tables {
  const run: Run = <Row>(sql: string, values: unknown[]) => statement<Row>(orm, sql, values);
  let rum: Promise<boolean> | undefined;
  const asked = () =>
    run<{ present: boolean }>(`select to_regclass($1) is not null as present`, [
      qualified(orm.em, "documents_facets_recent"),
    ]).then(([row]) => row.present);
  return {
    documents: qualified(orm.em, "documents"),
    rejections: qualified(orm.em, "rejections"),
    run,
    // A failed question is asked again next time, never remembered as an answer.
    ordersFacets: () => (rum ??= asked().catch((error: unknown) => ((rum = undefined), Promise.reject(error)))),
  };
}

/** What a deadlock answers: the statement is retried once, every writer taking rows in one order makes it rare. */
export function isDeadlock(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: string }).code === "40P01";
}
