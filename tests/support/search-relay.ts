import pg from "pg";
import { until } from "./until.js";

/**
 * Resolves once an owner's search relay has tried to push the documents of `ids` and failed (each one's attempts
 * counted in the owner's `search_documents`): the positive sign that the relay ran while search was cut.
 */
export async function untilPushFailed(databaseUrl: string, owner: string, ids: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await until(async () => {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from "${owner}".search_documents where id = any($1) and attempts > 0`,
        [ids],
      );
      return rows[0].n === ids.length;
    }, 30_000);
  } finally {
    await client.end();
  }
}
