import { create } from "@bufbuild/protobuf";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import { inTransaction } from "../../services/kit/db/transaction.js";
import { eventsCommittedBy, OutboxRelay, recordEvent } from "../../services/kit/events/outbox.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith } from "../support/skips.js";
import { until } from "../support/until.js";

/** Far longer than any test waits: an event delivered in time was woken for, not polled. */
const POLL_MS = "60000";

const commit = (ctx: ServiceContext, title: string) =>
  ctx.transaction((em) =>
    recordEvent(
      em,
      "network.notification.pushed",
      NotificationPushedSchema,
      create(NotificationPushedSchema, { notification: { title } }),
    ),
  );

describe("the outbox relay during a pass", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({ services: ["network"], env: { NATS_URL: "", PF_OUTBOX_POLL_MS: POLL_MS } });
  });
  afterAll(() => t?.stop());

  it("publishes an event committed while the one before it awaits its acknowledgement right after it, not at the poll", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const received: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The in-process bus acknowledges a publish once its subscribers are done: the first is held.
    const unsubscribe = ctx.bus.subscribe("network.notification.pushed", async (message) => {
      received.push(message.headers["Nats-Msg-Id"]);
      if (received.length === 1) await held;
    });
    try {
      const first = await commit(ctx, "first");
      await until(() => received.includes(first));
      const second = await commit(ctx, "second");
      release();
      await until(() => received.includes(second), 5_000);
      expect(received).toEqual([first, second]);
    } finally {
      release();
      unsubscribe();
    }
  });
});

describeWith(DATABASE_SERVER, "the outbox relay on a database server", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({
      services: ["network"],
      env: { NATS_URL: "", PF_DB_POOL: "2", PF_OUTBOX_POLL_MS: POLL_MS },
    });
  });
  afterAll(() => t?.stop());

  it("publishes while every connection of the service's pool is held by its transactions", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const received: string[] = [];
    const unsubscribe = ctx.bus.subscribe("network.notification.pushed", (message) => {
      received.push(message.headers["Nats-Msg-Id"]);
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = 0;
    const transactions = [1, 2].map(() =>
      ctx.transaction(async (em) => {
        await em.getConnection().execute("select 1", [], "all", em.getTransactionContext());
        holding++;
        await held;
      }),
    );
    // Another process writes an event and wakes the relay, as its commit would.
    const other = new pg.Client({ connectionString: t.platform.databaseUrl });
    try {
      await until(() => holding === 2);
      await other.connect();
      const id = `evt_0heldpool${Date.now().toString(36)}`;
      await other.query(
        `insert into network.outbox (id, subject, schema_id, payload) values ($1, 'network.notification.pushed', 'x', '{}')`,
        [id],
      );
      await other.query(`select pg_notify('pf_outbox', 'network')`);
      await until(() => received.includes(id), 3_000);
    } finally {
      release();
      await Promise.all(transactions);
      await other.end();
      unsubscribe();
    }
  });
});

describeWith(DATABASE_SERVER, "the outbox relay sending what its own process committed", () => {
  let t: TestPlatform;
  let pool: pg.Pool;
  /** The statements the relay under test ran, in order. */
  const statements: string[] = [];
  /** Whether the relay under test has taken the service's relay lease. */
  let leaseTaken = false;
  beforeAll(async () => {
    // The platform's own relay passes once at its start and lets the lease go: the poll never comes back in a test.
    t = await startTestPlatform({ services: ["network"], env: { NATS_URL: "", PF_OUTBOX_POLL_MS: POLL_MS } });
    pool = new pg.Pool({ connectionString: t.platform.databaseUrl, max: 2 });
    const query = pool.query.bind(pool) as (sql: string, params: unknown[]) => Promise<pg.QueryResult>;
    pool.query = (async (sql: string, params: unknown[]) => {
      statements.push(sql);
      const result = await query(sql, params);
      if (/^insert into "?network"?\.leases/.test(sql) && result.rows.length > 0) leaseTaken = true;
      return result;
    }) as typeof pool.query;
  });
  afterAll(async () => {
    await pool?.end();
    await t?.stop();
  });

  it("sends the events handed over by its commits without reading the outbox, and marks many in one statement", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const received: string[] = [];
    const unsubscribe = ctx.bus.subscribe("network.notification.pushed", (message) => {
      received.push(message.headers["Nats-Msg-Id"]);
    });
    const relay = new OutboxRelay(ctx.orm, ctx.bus, createLogger("silent"), "network", { intervalMs: 60_000, pool });
    // Committed as the service's transactions are, but told only to the relay under test.
    const commit = async (title: string) => {
      let committed!: EntityManager;
      const id = await inTransaction(ctx.orm, (em) => {
        committed = em;
        return recordEvent(
          em,
          "network.notification.pushed",
          NotificationPushedSchema,
          create(NotificationPushedSchema, { notification: { title } }),
        );
      });
      relay.committed(eventsCommittedBy(committed));
      return id;
    };
    const reads = () => statements.filter((sql) => /from "?network"?\.outbox/.test(sql)).length;
    const marks = () => statements.filter((sql) => /^update "?network"?\.outbox set sent_at/.test(sql)).length;
    const unsent = async (ids: string[]) =>
      (
        await ctx.orm.em
          .getConnection()
          .execute<{ n: number }[]>(
            `select count(*)::int as n from network.outbox where id = any(string_to_array(?, ',')) and sent_at is null`,
            [ids.join(",")],
          )
      )[0].n;
    try {
      relay.start();
      // The platform's relay may hold the lease a moment longer (its own start's pass): the relay under test is woken
      // until it has taken it. Its first pass with it reads the outbox: caught up after it.
      await until(() => {
        if (!leaseTaken) relay.wake();
        return leaseTaken;
      });
      const first = await commit("first");
      await until(() => received.includes(first));
      await until(async () => (await unsent([first])) === 0);
      const readsBefore = reads();
      const marksBefore = marks();

      const handed = [await commit("second"), await commit("third")];
      await until(() => handed.every((id) => received.includes(id)));
      expect(received.slice(-2)).toEqual(handed);
      expect(reads()).toBe(readsBefore);
      // Marked sent together, a moment later.
      await until(async () => (await unsent(handed)) === 0);
      expect(marks()).toBe(marksBefore + 1);
      expect(reads()).toBe(readsBefore);

      // A wake from elsewhere (another process's commit, the poll) still reads.
      relay.wake();
      await until(() => reads() > readsBefore);
    } finally {
      await relay.stop();
      unsubscribe();
    }
  });
});
