import { create } from "@bufbuild/protobuf";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
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
