import { create } from "@bufbuild/protobuf";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import { RELAY_APPLICATION_NAME } from "../../services/kit/events/relay-database.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, itWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";

/** The test stream's duplicate window: "past the window" within a test. */
const WINDOW_MS = 1_000;
/** The advisory lock the test holds while the relay marks, so its mark waits (as a dying process's would). */
const HOLD = 725_005;

/** How many messages of the stream carry this Nats-Msg-Id. */
async function copiesInStream(nc: NatsConnection, stream: string, id: string): Promise<number> {
  const consumer = await jetstream(nc).consumers.get(stream, { deliver_policy: DeliverPolicy.All, headers_only: true });
  let copies = 0;
  for (let done = false; !done;) {
    let read = 0;
    for await (const message of await consumer.fetch({ max_messages: 1_000, expires: 1_000 })) {
      read++;
      if (message.headers?.get("Nats-Msg-Id") === id) copies++;
      done ||= message.info.pending === 0;
    }
    done ||= read === 0;
  }
  await consumer.delete().catch(() => undefined);
  return copies;
}

describeWith(DATABASE_SERVER, "an event published, then its relay killed before marking it sent", () => {
  let nc: NatsConnection;
  let first: TestPlatform;
  let second: TestPlatform | undefined;
  let db: pg.Client;
  beforeAll(async () => {
    first = await startTestPlatform({ services: ["network"] });
    db = new pg.Client({ connectionString: first.platform.databaseUrl });
    await db.connect();
    if (process.env.NATS_URL) nc = await connect({ servers: process.env.NATS_URL });
  });
  afterAll(async () => {
    await db?.end();
    await second?.stop();
    await first?.stop();
    await nc?.close();
  });

  itWith(
    NATS,
    "reaches its stream once when the next relay starts past the duplicate window",
    async () => {
      const stream = first.events!.stream("network");
      const jsm = await jetstreamManager(nc);
      await jsm.streams.update(stream, { duplicate_window: WINDOW_MS * 1e6 });
      // Marks wait for the test's lock: the relay is acknowledged, then stuck before its mark.
      await db.query(`create function network.hold_marks() returns trigger language plpgsql
      as $$ begin perform pg_advisory_xact_lock(${HOLD}); return new; end $$`);
      await db.query(
        `create trigger hold_marks before update on network.outbox for each row execute function network.hold_marks()`,
      );
      await db.query(`select pg_advisory_lock(${HOLD})`);
      const ctx = first.platform.contexts.get("network")!;
      const id = await ctx.transaction((em) =>
        recordEvent(
          em,
          "network.notification.pushed",
          NotificationPushedSchema,
          create(NotificationPushedSchema, { notification: { title: "acknowledged, never marked" } }),
        ),
      );
      const markWaiting = `select pid from pg_stat_activity
      where datname = current_database() and application_name = $1 and wait_event_type = 'Lock'`;
      await until(async () => (await db.query(markWaiting, [RELAY_APPLICATION_NAME])).rowCount! > 0);
      expect(await copiesInStream(nc, stream, id)).toBe(1);

      // The process dies: its lease stays with it, its mark never lands.
      await db.query(`update network.leases set holder = 'killed', until = now() + interval '1 hour'`);
      await db.query(`select pg_terminate_backend(pid) from (${markWaiting}) waiting`, [RELAY_APPLICATION_NAME]);
      await first.platform.stop();
      await db.query(`select pg_advisory_unlock(${HOLD})`);
      await db.query(`drop trigger hold_marks on network.outbox`);
      const [unsent] = (await db.query(`select sent_at from network.outbox where id = $1`, [id])).rows;
      expect(unsent.sent_at).toBeNull();

      // Past the window: a probe published after the event's acknowledgement is no longer dropped when sent again.
      const js = jetstream(nc);
      const probe = `evt_0probe${Date.now().toString(36)}`;
      await js.publish(first.events!.subject("network.test.probe"), new Uint8Array(), { msgID: probe });
      await until(
        async () =>
          !(await js.publish(first.events!.subject("network.test.probe"), new Uint8Array(), { msgID: probe }))
            .duplicate,
        10_000,
      );

      // The restart: the killed holder's lease lapses, another process relays the outbox.
      await db.query(`update network.leases set until = now()`);
      second = await startTestPlatform({
        services: ["network"],
        env: { DATABASE_URL: first.platform.databaseUrl, PF_NATS_NAMESPACE: first.events!.namespace, PF_GATEWAY: "0" },
      });
      await until(
        async () =>
          (await db.query(`select 1 from network.outbox where id = $1 and sent_at is not null`, [id])).rowCount === 1,
      );
      expect(await copiesInStream(nc, stream, id)).toBe(1);
    },
    30_000,
  );
});
