import { create, toJsonString } from "@bufbuild/protobuf";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { consumer, startConsumer } from "../../services/kit/events/consumer.js";
import { CONSUMER_ACK_WAIT_MS } from "../../services/kit/events/jetstream-bus.js";
import { RELAY_LEASE_MS, recordEvent } from "../../services/kit/events/outbox.js";
import { durableCaughtUp } from "../support/nats.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, NATS } from "../support/skips.js";
import { until, untilPast } from "../support/until.js";

/** Events must flow again within seconds of a crash, not after a 30 s lease or ack wait. */
const RECOVERY_MS = 8_000;

describeWith(NATS, "events after a crash", () => {
  let t: TestPlatform;
  let nc: NatsConnection;
  beforeAll(async () => {
    t = await startTestPlatform({ services: ["network"] });
    nc = await connect({ servers: process.env.NATS_URL });
  });
  afterAll(async () => {
    await nc?.close();
    await t?.stop();
  });

  const notification = (title: string) =>
    new TextEncoder().encode(
      toJsonString(NotificationPushedSchema, create(NotificationPushedSchema, { notification: { title } })),
    );

  it("a new relay publishes committed events within seconds of its lease's holder crashing", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const received: string[] = [];
    const subscription = nc.subscribe(t.events!.subject("network.notification.pushed"), {
      callback: (_e, m) => void received.push(m.headers?.get("Nats-Msg-Id") ?? ""),
    });
    await nc.flush();
    // The holder took the lease just before it crashed, and never renews or releases it.
    await ctx.orm.em.getConnection().execute(
      `insert into network.leases (name, holder, until) values ('kit.outbox-relay', 'crashed', now() + ? * interval '1 millisecond')
       on conflict (name) do update set holder = excluded.holder, until = excluded.until`,
      [RELAY_LEASE_MS],
    );
    const started = Date.now();
    const id = await ctx.transaction((em) =>
      recordEvent(
        em,
        "network.notification.pushed",
        NotificationPushedSchema,
        create(NotificationPushedSchema, { notification: { title: "after the crash" } }),
      ),
    );
    await until(() => received.includes(id), RECOVERY_MS);
    expect(Date.now() - started).toBeGreaterThan(RELAY_LEASE_MS - 1_000);
    subscription.unsubscribe();
  }, 15_000);

  it("a consumer drains a backlog left pending by a crashed instance within seconds, each event once", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const applied = new Map<string, number>();
    const definition = consumer({
      name: `backlog_${Date.now().toString(36)}`,
      subject: "network.notification.pushed",
      event: NotificationPushedSchema,
      async handle(event) {
        const title = event.notification!.title;
        if (title.startsWith("backlog-")) applied.set(title, (applied.get(title) ?? 0) + 1);
      },
    });
    // Made, then stopped: the backlog comes while no instance consumes.
    await (
      await startConsumer(ctx, definition)
    )();
    const titles = Array.from({ length: 200 }, (_, i) => `backlog-${i}`);
    const run = Date.now().toString(36);
    await Promise.all(
      titles.map((title, i) =>
        ctx.bus.publish("network.notification.pushed", `evt_0bl${run}${i}`, notification(title), {
          "Nats-Msg-Id": `evt_0bl${run}${i}`,
        }),
      ),
    );
    // An instance pulled events and crashed before acking them.
    const durable = `network_${definition.name}`;
    const crashed = await connect({ servers: process.env.NATS_URL });
    const pulled = await (
      await jetstream(crashed).consumers.get(t.events!.stream("network"), durable)
    ).fetch({
      max_messages: 64,
      expires: 2_000,
    });
    // The server hands over the whole batch at once; the first arriving is enough to know it has.
    await pulled[Symbol.asyncIterator]().next();
    await crashed.close();

    const stop = await startConsumer(ctx, definition);
    try {
      // What the crashed instance held comes back after the ack wait; the rest is applied in batches.
      await until(() => applied.size === titles.length, CONSUMER_ACK_WAIT_MS + 6_000);
      // Redeliveries of what the crashed instance held find the inbox mark: every event taken and acknowledged.
      await until(() => durableCaughtUp(process.env.NATS_URL!, t.events!, "network", durable));
      expect([...applied.values()].every((count) => count === 1)).toBe(true);
    } finally {
      await stop();
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.delete(t.events!.stream("network"), durable).catch(() => undefined);
    }
  }, 20_000);

  it("a handler slower than the ack wait is not delivered again while it runs", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const durable = `slow_${Date.now().toString(36)}`;
    const deliveries: string[] = [];
    let handled = false;
    const stop = await ctx.bus.consume("network.notification.pushed", durable, "new", async (messages) => {
      deliveries.push(...messages.map((message) => message.headers["Nats-Msg-Id"]));
      // Slower than the ack wait (the server's clock): busy until it has passed by two seconds.
      await untilPast(Date.now() + CONSUMER_ACK_WAIT_MS + 2_000);
      handled = true;
    });
    try {
      const id = `evt_0slow${Date.now().toString(36)}`;
      await ctx.bus.publish("network.notification.pushed", id, notification("slow"), { "Nats-Msg-Id": id });
      await until(() => deliveries.length > 0, 2_000);
      // Handled, acknowledged, and nothing left to deliver again.
      await until(() => handled, CONSUMER_ACK_WAIT_MS + 5_000);
      await until(() => durableCaughtUp(process.env.NATS_URL!, t.events!, "network", durable));
      expect(deliveries).toEqual([id]);
    } finally {
      await stop();
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.delete(t.events!.stream("network"), durable).catch(() => undefined);
    }
  }, 15_000);

  it("a durable consumer made with the old 30 s ack wait, one at a time, takes the new settings on start", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const durable = `old_${Date.now().toString(36)}`;
    const stream = t.events!.stream("network");
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: t.events!.subject("network.notification.pushed"),
      ack_policy: AckPolicy.Explicit,
      ack_wait: 30_000_000_000,
      max_ack_pending: 1,
    });
    const stop = await ctx.bus.consume("network.notification.pushed", durable, "new", async () => undefined);
    try {
      const { config } = await jsm.consumers.info(stream, durable);
      expect(config.ack_wait).toBe(CONSUMER_ACK_WAIT_MS * 1e6);
      expect(config.max_ack_pending).toBeGreaterThan(1);
    } finally {
      await stop();
      await jsm.consumers.delete(stream, durable).catch(() => undefined);
    }
  });
});
