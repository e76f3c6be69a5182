import pg from "pg";
import { vi } from "vitest";

/**
 * How many SQL statements this process sends to the database while `work` runs whose text matches `tables`
 * (the tables a read touches, so the platform's own background statements, relays and leases, are not counted):
 * every statement goes through `pg`'s client, from MikroORM and hot reads alike.
 */
export async function statementsDuring(tables: RegExp, work: () => Promise<unknown>): Promise<number> {
  const query = vi.spyOn(pg.Client.prototype, "query");
  try {
    await work();
    const texts = query.mock.calls.map(([sent]) =>
      typeof sent === "string" ? sent : (sent as { text?: string }).text,
    );
    return texts.filter((text) => tables.test(text ?? "")).length;
  } finally {
    query.mockRestore();
  }
}
