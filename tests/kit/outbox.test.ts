import { create } from "@bufbuild/protobuf";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { consumer, startConsumer } from "../../services/kit/events/consumer.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, itWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";

const marker = `ob-${Date.now().toString(36)}-`;

describe("the outbox relay on the in-process bus", () => {
  let t: TestPlatform;
  let push: (title: string) => Promise<void>;
  beforeAll(async () => {
    t = await startTestPlatform({ services: ["network"], env: { NATS_URL: "" } });
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
    push = async (title) => {
      expect(
        (
          await t.http("POST", "/network/internal/notifications/mention", {
            token,
            body: { recipients: ["usr_o1"], title: marker + title },
          })
        ).status,
      ).toBe(201);
    };
  });
  afterAll(() => t?.stop());

  // "1" waits for a write committed beside the relay's pass: the embedded database, a single session, serves one at a time.
  itWith(
    DATABASE_SERVER,
    "delivers events one at a time in the order written; a failing one is tried again after a pause and holds the rest",
    async () => {
      const ctx = t.platform.contexts.get("network")!;
      const seen: string[] = [];
      let active = 0;
      let overlapped = false;
      let failures = 0;
      const written = async () =>
        (
          await ctx.orm.em
            .getConnection()
            .execute<{ n: number }[]>(`select count(*)::int as n from network.outbox where payload like ?`, [
              `%${marker}%`,
            ])
        )[0].n;
      const stop = await startConsumer(
        ctx,
        consumer({
          name: "order_probe",
          subject: "network.notification.pushed",
          event: NotificationPushedSchema,
          async handle(event) {
            const title = event.notification!.title.slice(marker.length);
            overlapped ||= ++active > 1;
            // "1" is held until the events behind it are committed: a relay that overlapped would hand one over now.
            if (title === "1") await until(async () => (await written()) >= 4);
            active--;
            if (title === "2" && failures++ === 0) throw new Error("projection busy");
            seen.push(title);
          },
        }),
      );
      try {
        await push("1");
        // "1" alone first: were "2" to "4" written before the relay read "1", the four would go as one batch.
        await until(() => active === 1);
        // One transaction, so one batch: "3" and "4" are queued behind "2" when it fails.
        await ctx.transaction(async (em) => {
          for (const title of ["2", "3", "4"]) {
            await recordEvent(
              em,
              "network.notification.pushed",
              NotificationPushedSchema,
              create(NotificationPushedSchema, { notification: { title: marker + title } }),
            );
          }
        });
        await until(() => seen.length === 4);
        expect(overlapped).toBe(false);
        // "2" failed once: after its pause it came, and the ones behind it after it.
        expect(seen).toEqual(["1", "2", "3", "4"]);
        // The relay records the send just after the consumer is done with it.
        const row = async () =>
          (
            await ctx.orm.em
              .getConnection()
              .execute<{ attempts: number; sent: boolean }[]>(
                `select attempts, sent_at is not null as sent from network.outbox where payload like ?`,
                [`%${marker}2"%`],
              )
          )[0];
        await until(async () => (await row()).sent);
        expect(await row()).toEqual({ attempts: 1, sent: true });
      } finally {
        await stop();
      }
    },
  );
});

describeWith(NATS, "the outbox relay on JetStream", () => {
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

  it("sets aside an event NATS can never take, and goes on publishing the ones after it", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const db = ctx.orm.em.getConnection();
    const received: string[] = [];
    const wire = t.events!.subject;
    const subscription = nc.subscribe(wire("network.poison.*"), { callback: (_e, m) => void received.push(m.subject) });
    await nc.flush();
    // Written past recordEvent's own limit, as an older version might have: bigger than NATS's max_payload.
    await db.execute(
      `insert into network.outbox (id, subject, schema_id, payload) values ('evt_0poison', 'network.poison.big', 'x', ?)`,
      ["x".repeat(2 * 1024 * 1024)],
    );
    await db.execute(
      `insert into network.outbox (id, subject, schema_id, payload) values ('evt_0poisonafter', 'network.poison.after', 'x', '{}')`,
    );
    await until(async () => {
      const rows = await db.execute<{ id: string; sent: boolean; failed: boolean }[]>(
        `select id, sent_at is not null as sent, failed_at is not null as failed from network.outbox where id like 'evt_0poison%' order by id`,
      );
      return rows.length === 2 && rows[0].failed && !rows[0].sent && rows[1].sent;
    });
    await until(() => received.includes(wire("network.poison.after")));
    expect(received).not.toContain(wire("network.poison.big"));
    subscription.unsubscribe();
  });

  it("keeps the order written with two instances relaying the same outbox", async () => {
    const other = await startTestPlatform({
      services: ["network"],
      env: { DATABASE_URL: t.platform.databaseUrl, PF_NATS_NAMESPACE: t.events!.namespace },
    });
    try {
      const received: string[] = [];
      const subscription = nc.subscribe(t.events!.subject("network.ordered.*"), {
        callback: (_e, m) => void received.push(m.headers?.get("Nats-Msg-Id") ?? ""),
      });
      await nc.flush();
      const ids = Array.from({ length: 300 }, (_, i) => `evt_0order${String(i).padStart(4, "0")}`);
      const db = t.platform.contexts.get("network")!.orm.em.getConnection();
      await db.execute(
        `insert into network.outbox (id, subject, schema_id, payload) select id, 'network.ordered.x', 'x', '{}' from unnest(?::text[]) as id`,
        [`{${ids.join(",")}}`],
      );
      await until(() => ids.every((id) => received.includes(id)), 20_000);
      const firsts = received.filter((id, i) => received.indexOf(id) === i);
      expect(firsts).toEqual(ids);
      subscription.unsubscribe();
    } finally {
      await other.stop();
    }
  });
});
