import { expect } from "vitest";
import pg from "pg";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { poolWedged } from "../../services/kit/db/orm.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { CallGuard } from "../../services/kit/rpc/guard.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { usePlatform } from "../support/platform.js";
import { serverUrl } from "../support/database.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

describeWith(DATABASE_SERVER, "PostgreSQL connections terminated under load", () => {
  // Its bursts fill every service's pool at once: two connections each keep the whole platform well under the
  // server's 100 while another file runs beside it (with four each, 17 services took 68 and the server refused clients).
  const t = usePlatform({ env: { PF_DB_POOL: "2" } });

  /** Whether the server still has this backend. */
  async function backendAlive(pid: number): Promise<boolean> {
    const client = new pg.Client({ connectionString: serverUrl() });
    await client.connect();
    try {
      return (await client.query("select 1 from pg_stat_activity where pid = $1", [pid])).rowCount! > 0;
    } finally {
      await client.end();
    }
  }

  /** Terminates the platform's backends (every one, or those given), as a server restart would. */
  async function terminate(pid?: number): Promise<void> {
    const client = new pg.Client({ connectionString: serverUrl() });
    await client.connect();
    try {
      const database = new URL(t.platform.databaseUrl).pathname.slice(1);
      await client.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid() and ($2::int is null or pid = $2)`,
        [database, pid ?? null],
      );
    } finally {
      await client.end();
    }
  }

  /** One short transaction of the service; fails if it has not answered within `ms` (a drained pool never does). */
  async function read(ctx: ServiceContext, ms: number, sql = "select 1"): Promise<unknown> {
    let answered = false;
    const work = ctx.transaction((em) => em.getConnection().execute(sql, [], "all", em.getTransactionContext()));
    // Noted either way (and so never an unhandled rejection while waiting); the caller gets the outcome itself.
    work.then(
      () => (answered = true),
      () => (answered = true),
    );
    await until(() => answered, ms).catch(() => {
      throw new Error(`${ctx.key}: no answer in ${ms} ms`);
    });
    return work;
  }

  itWith(DATABASE_SERVER, "every service answers again within seconds, without a restart", async () => {
    const contexts = [...t.platform.contexts.values()];
    const statuses: number[] = [];
    const stopAt = Date.now() + 1_200;
    const burst = async (ctx: ServiceContext) => {
      while (Date.now() < stopAt) await read(ctx, 15_000, "select pg_sleep(0.01)").catch(() => undefined);
    };
    const reads = async () => {
      while (Date.now() < stopAt) statuses.push((await t.http("GET", "/vip/api/v1/plans")).status);
    };
    const load = Promise.all([
      ...contexts.flatMap((ctx) => [1, 2, 3, 4, 5, 6].map(() => burst(ctx))),
      reads(),
      reads(),
    ]);
    for (let round = 0; round < 4; round++) {
      // Requests were answered since the last cut: the load goes on between them.
      const answered = statuses.length;
      await until(() => statuses.length > answered || Date.now() >= stopAt);
      await terminate();
    }
    await load;

    // Database failures are answered 503, never 500.
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    // Within seconds every service's pool hands out connections again.
    for (const ctx of contexts) await read(ctx, 3_000);
    expect((await t.http("GET", "/vip/api/v1/plans")).status).toBe(200);
    const started = Date.now();
    const ready = await t.http("GET", "/readyz");
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(ready).toMatchObject({ status: 200, body: { status: "ok" } });
    expect((await t.http("GET", "/healthz")).status).toBe(200);
  });

  itWith(DATABASE_SERVER, "a query on a terminated connection is answered 503, not 500", async () => {
    const ctx = t.platform.contexts.get("vip")!;
    const failure = await ctx
      .transaction(async (em) => {
        const context = em.getTransactionContext();
        const [{ pid }] = await em.getConnection().execute("select pg_backend_pid() as pid", [], "all", context);
        await terminate(Number(pid));
        await until(async () => !(await backendAlive(Number(pid))));
        await em.getConnection().execute("select 1", [], "all", context);
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(String(failure)).toMatch(/not queryable/);

    const guard = new CallGuard(createLogger("silent"));
    const answer = await guard
      .interceptor()(() => Promise.reject(failure))({ method: { name: "Read" } } as never)
      .catch((error: unknown) => error);
    expect(problemOf(answer)).toMatchObject({ status: 503, code: "dependency.unavailable" });
    await read(ctx, 3_000);
  });

  itWith(DATABASE_SERVER, "a pool whose connections are all held, and none given back, is wedged", async () => {
    const orm = t.platform.contexts.get("vip")!.orm;
    const pool = await orm.em.getConnection().getNativeClient();
    const held = await Promise.all(Array.from({ length: pool.options.max ?? 0 }, () => pool.connect()));
    expect(held.length).toBe(2);
    try {
      expect(await poolWedged(orm, 300)).toBe(false);
      // Held past the 300 ms, with none given back.
      await until(() => poolWedged(orm, 300));
    } finally {
      for (const client of held) client.release();
    }
    expect(await poolWedged(orm, 300)).toBe(false);
  });
});
