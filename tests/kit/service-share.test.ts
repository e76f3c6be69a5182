import { afterAll, beforeAll, expect } from "vitest";
import { openOnProcessPool, type MikroORM } from "../../services/kit/db/orm.js";
import { ProcessPool } from "../../services/kit/db/pool.js";
import { isDatabaseUnavailable } from "../../services/kit/db/unavailable.js";
import { schemaOf } from "../../services/kit/migrations.js";
import { modules } from "../../platform/registry.js";
import { serverUrl } from "../support/database.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

// PF_DB_SERVICE_CONNECTIONS (kit/db/pool.ts): one service holds at most its share of the process's pool at once; its
// other transactions wait their turn, and another service's calls do not wait behind them.
describeWith(DATABASE_SERVER, "a service's share of the process's pool", () => {
  const SHARE = 2;
  let pool: ProcessPool;
  let first: MikroORM;
  let second: MikroORM;

  beforeAll(async () => {
    pool = new ProcessPool({ url: serverUrl()!, size: 6, serviceShare: SHARE, acquireTimeoutMs: 1_000 });
    // Schemas taken as migrated: nothing here reads a table, only holds connections.
    const [a, b] = modules.slice(0, 2).map(schemaOf);
    const all = (schema: typeof a) => new Set(schema.migrations.map((m) => m.name));
    first = await openOnProcessPool(a, pool, all(a), false);
    second = await openOnProcessPool(b, pool, all(b), false);
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await pool?.close();
  });

  /** A transaction of `orm` holding its connection until `release` is called. */
  function held(orm: MikroORM): { open: Promise<void>; release: () => void; done: Promise<void> } {
    let release!: () => void;
    let opened!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const open = new Promise<void>((resolve) => (opened = resolve));
    const done = orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute("select 1", [], "all", em.getTransactionContext());
      opened();
      await gate;
    });
    return { open, release, done };
  }

  const inUse = () => pool.totalCount - pool.idleCount;

  itWith(DATABASE_SERVER, "a third transaction waits for a turn; another service's call does not", async () => {
    const holders = [held(first), held(first)];
    await Promise.all(holders.map((h) => h.open));
    expect(inUse()).toBe(SHARE);

    let thirdDone = false;
    const third = held(first);
    void third.open.then(() => (thirdDone = true));
    // The other service answers while the first's third transaction still waits for its turn.
    await second.em.fork().getConnection().execute("select 1");
    expect(thirdDone).toBe(false);
    expect(inUse()).toBe(SHARE);

    holders[0].release();
    await third.open;
    expect(inUse()).toBe(SHARE);
    holders[1].release();
    third.release();
    await Promise.all([...holders, third].map((h) => h.done));
    await until(() => inUse() === 0);
  });

  itWith(DATABASE_SERVER, "a turn not given within the acquire timeout fails as an unavailable database", async () => {
    const holders = [held(first), held(first)];
    await Promise.all(holders.map((h) => h.open));
    const refused = await first.em
      .fork()
      .getConnection()
      .execute("select 1")
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isDatabaseUnavailable(refused)).toBe(true);
    for (const h of holders) h.release();
    await Promise.all(holders.map((h) => h.done));
    // Turns are given back: the share serves again.
    await first.em.fork().getConnection().execute("select 1");
  });
});
