import pg from "pg";
import { expect } from "vitest";
import { poolUse } from "../../services/kit/db/orm.js";
import { APPLICATION_NAME } from "../../services/kit/db/readiness.js";
import { serverUrl } from "../support/database.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

// Issue 25, finding 6: /readyz asked the database through the services' pools, so under load its `select 1` queued
// behind user work and answered 503 {"database": false} with no database fault. That the database really being
// unreachable is still 503 is tests/kit/dependencies.test.ts's.
describeWith(DATABASE_SERVER, "readiness under load", () => {
  const t = usePlatform({ services: ["network"], env: { PF_DB_POOL: "2" } });

  itWith(
    DATABASE_SERVER,
    "answers 200 while every connection of the pool is busy and more work queues for one",
    async () => {
      const ctx = t.platform.contexts.get("network")!;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // User work: twice as many transactions as the pool has connections, each holding its connection until released.
      const load = Array.from({ length: 4 }, () =>
        ctx
          .transaction(async (em) => {
            await em.getConnection().execute("select 1", [], "all", em.getTransactionContext());
            await released;
          })
          .catch(() => undefined),
      );
      try {
        await until(async () => {
          const use = await poolUse(ctx.orm);
          return use.inUse === use.max && use.waiting > 0;
        });
        const ready = await t.http("GET", "/readyz");
        expect(ready).toMatchObject({ status: 200, body: { status: "ok", checks: { database: true } } });
        // The load is still there: the probe did not wait for it to pass.
        expect(await poolUse(ctx.orm)).toMatchObject({ inUse: 2, max: 2 });
      } finally {
        release();
        await Promise.all(load);
      }
    },
  );

  itWith(DATABASE_SERVER, "opens its connection again at once when the server closed it (a restart)", async () => {
    expect((await t.http("GET", "/readyz")).status).toBe(200);
    const admin = new pg.Client({ connectionString: serverUrl() });
    await admin.connect();
    try {
      const closed = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2",
        [new URL(t.platform.databaseUrl).pathname.slice(1), APPLICATION_NAME],
      );
      expect(closed.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    expect(await t.http("GET", "/readyz")).toMatchObject({ status: 200, body: { checks: { database: true } } });
  });
});
