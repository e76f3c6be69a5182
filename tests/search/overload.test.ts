import pg from "pg";
import { expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { query } from "./support.js";

/**
 * One query at a time, the declared queue behind it (64 waiting), so the test can fill both. No in-memory index:
 * queries run on PostgreSQL, where a lock holds them.
 */
const t = usePlatform({
  services: ["search"],
  env: {
    PF_SEARCH_QUERIES_IN_FLIGHT: "1",
    PF_SEARCH_ANONYMOUS_PER_MINUTE: "100000",
    PF_SEARCH_INDEX_MAX_DOCUMENTS: "0",
  },
});
const WAITING = 64;

describeWith(DATABASE_SERVER, "queries under overload", () => {
  it("wait their turn in a bounded queue; past it a caller is refused at once with Retry-After, never after a pool wait", async () => {
    const holder = new pg.Client({ connectionString: t.platform.databaseUrl });
    await holder.connect();
    const answers: Promise<Awaited<ReturnType<typeof query>>>[] = [];
    try {
      // The documents locked: the query running holds its turn until the lock is released.
      await holder.query("begin");
      await holder.query(`lock table "search".documents in access exclusive mode`);
      const extra = 3;
      for (let n = 0; n < 1 + WAITING + extra; n++) answers.push(query(t, `q=word${n}`));
      const settled: Awaited<ReturnType<typeof query>>[] = [];
      for (const answer of answers) void answer.then((done) => settled.push(done));
      // Exactly the calls past the queue answer while the lock holds: refused, with no connection waited for.
      await until(() => settled.length === extra);
      for (const refused of settled) {
        expect(refused.status).toBe(429);
        expect(refused.body).toMatchObject({ code: "service.busy", rule: "search.queries" });
        expect(refused.headers.get("retry-after")).toBe("1");
      }
      // And one query, only one, waits on the lock in PostgreSQL: the rest wait in the queue, holding no connection.
      const blocked = async () => {
        const { rows } = await holder.query<{ n: string }>(
          `select count(*) as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like '%documents%'`,
        );
        return Number(rows[0].n);
      };
      await until(async () => (await blocked()) > 0);
      expect(await blocked()).toBe(1);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
    const statuses = (await Promise.all(answers)).map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1 + WAITING);
  });
});
