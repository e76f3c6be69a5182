import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { sql } from "../../services/kit/db/sql.js";
import { BatchFailure } from "../../services/kit/events/bus.js";
import { consumer, inboxHandler, startConsumer } from "../../services/kit/events/consumer.js";
import { Subject } from "../../services/network/db/entities.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

/** This file's events: other test files publish on the same stream at the same time. */
const marker = `run-${Date.now().toString(36)}-`;

/** A delivery of network.notification.pushed titled `title`, as the bus hands it, under the event id `id`. */
const pushed = (title: string, id: string) => ({
  subject: "network.notification.pushed",
  data: new TextEncoder().encode(JSON.stringify({ notification: { id: `ntf_${title}`, title } })),
  headers: { "Nats-Msg-Id": id },
});

/**
 * A consumer of network.notification.pushed that fails once on a chosen title. What it applies of this file's events
 * it writes in the event's transaction (`probe_applied`, made by the suite), so `applied` answers what committed: a
 * batch rolled back and applied again counts once.
 */
function probe(t: TestPlatform, name: string, failOnce: string) {
  let failed = false;
  const definition = consumer({
    name,
    subject: "network.notification.pushed",
    event: NotificationPushedSchema,
    from: "new",
    async handle(event, em) {
      const title = event.notification?.title ?? "";
      if (!title.startsWith(marker)) return;
      if (title === marker + failOnce && !failed) {
        failed = true;
        throw new Error("the projection's database was busy");
      }
      await sql(em, "insert into {probe_applied} (consumer, title) values (?, ?)", [name, title.slice(marker.length)]);
    },
  });
  const applied = async () =>
    (
      await t.platform.contexts
        .get("network")!
        .orm.em.getConnection()
        .execute<{ title: string }[]>("select title from network.probe_applied where consumer = ? order by title", [
          name,
        ])
    ).map((row) => row.title);
  return { definition, applied, failedOnce: () => failed };
}

/** Durable consumers outlive their process by design; a test's own must not pile up on the shared server. */
async function removeDurable(t: TestPlatform, durable: string): Promise<void> {
  if (!t.events) return;
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.delete(t.events.stream("network"), durable).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

describe.each([
  { bus: "the in-process bus", env: { NATS_URL: "" } },
  ...(process.env.NATS_URL || process.env.CI === "true"
    ? [{ bus: "JetStream", env: {} as Record<string, string> }]
    : []),
])("durable consumers on $bus", ({ env }) => {
  let t: TestPlatform;
  let push: (title: string) => Promise<void>;
  beforeAll(async () => {
    t = await startTestPlatform({ services: ["network"], env });
    await t.platform.contexts
      .get("network")!
      .orm.em.getConnection()
      .execute("create table network.probe_applied (consumer text not null, title text not null)");
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
    push = async (title) => {
      const answer = await t.http("POST", "/network/internal/notifications/mention", {
        token,
        body: { recipients: ["usr_c1"], title: marker + title },
      });
      expect(answer.status).toBe(201);
    };
  });
  afterAll(() => t?.stop());

  it("redeliver an event whose handling failed, and apply every event once", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const { definition, applied, failedOnce } = probe(t, `probe_${Date.now().toString(36)}`, "second");
    const stop = await startConsumer(ctx, definition);
    try {
      for (const title of ["first", "second", "third"]) await push(title);
      await until(async () => {
        const titles = await applied();
        return titles.includes("second") && titles.includes("third");
      }, 20_000);
      expect(failedOnce()).toBe(true);
      expect(await applied()).toEqual(["first", "second", "third"]);
    } finally {
      await stop();
      await removeDurable(t, `network_${definition.name}`);
    }
  });

  it("apply a batch in one transaction; an event that fails leaves those before it applied and itself not", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const transactions: string[] = [];
    let failed = false;
    const handle = inboxHandler(
      ctx,
      consumer({
        name: "batch_probe",
        subject: "network.notification.pushed",
        event: NotificationPushedSchema,
        async handle(event, em) {
          const [{ tx }] = await sql<{ tx: string }>(em, "select txid_current()::text as tx");
          transactions.push(tx);
          if (event.notification!.title === "b" && !failed) {
            failed = true;
            throw new Error("the projection's database was busy");
          }
        },
      }),
    );
    const run = Date.now().toString(36);
    const ids = Object.fromEntries(["a", "b", "c"].map((title) => [title, `evt_${marker}${run}_${title}`]));
    const batch = ["a", "b", "c"].map((title) => pushed(title, ids[title]));
    /** The batch's events the inbox holds as handled by the probe. */
    const handled = async () =>
      (
        await ctx.transaction((em) =>
          sql<{ event_id: string }>(
            em,
            "select event_id from {inbox} where consumer = 'batch_probe' and event_id in (?, ?, ?)",
            [ids.a, ids.b, ids.c],
          ),
        )
      )
        .map((row) => Object.keys(ids).find((title) => ids[title] === row.event_id))
        .sort();
    const failure: unknown = await handle(batch).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BatchFailure);
    expect([...(failure as BatchFailure).applied]).toEqual([0]);
    // "a" is applied; the failing "b" is not, and "c" waits behind it.
    expect(await handled()).toEqual(["a"]);
    transactions.length = 0;
    // Delivered again with the rest: "a" is in the inbox, "b" and "c" go together, in one transaction.
    await handle(batch);
    expect(await handled()).toEqual(["a", "b", "c"]);
    expect(transactions).toHaveLength(2);
    expect(new Set(transactions).size).toBe(1);
  });

  it("apply an event delivered twice in one batch once", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const applied: string[] = [];
    const handle = inboxHandler(
      ctx,
      consumer({
        name: "twice_probe",
        subject: "network.notification.pushed",
        event: NotificationPushedSchema,
        async handle(event) {
          applied.push(event.notification!.title);
        },
      }),
    );
    const message = (title: string) => pushed(title, `evt_twice_${marker}${Date.now().toString(36)}_${title}`);
    const [x, y] = [message("x"), message("y")];
    await handle([x, y, x]);
    expect(applied).toEqual(["x", "y"]);
  });

  it("flush a flushOnce batch's writes at its end; a failing write there is its own event's failure", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const run = Date.now().toString(36);
    const seenBefore: string[] = [];
    // Each event writes a subject through its entity; "bad" one the database refuses (its id check) at the flush.
    const handle = inboxHandler(
      ctx,
      consumer({
        name: "flush_once_probe",
        subject: "network.notification.pushed",
        event: NotificationPushedSchema,
        flushOnce: true,
        async handle(event, em) {
          const title = event.notification!.title;
          const rows = await sql<{ id: string }>(em, "select id from {subjects} where id like ?", [`usr_fo${run}%`]);
          seenBefore.push(`${title}:${rows.length}`);
          em.create(Subject, {
            id: title === "bad" ? "not a subject id" : `usr_fo${run}${title}`,
            updatedAt: new Date(),
          });
        },
      }),
    );
    const batch = (titles: string[]) => titles.map((title) => pushed(title, `evt_fo_${marker}${run}_${title}`));
    const written = async () =>
      (
        await sql<{ id: string }>(ctx.orm.em.fork(), "select id from {subjects} where id like ? order by id", [
          `usr_fo${run}%`,
        ])
      ).map((row) => row.id.slice(`usr_fo${run}`.length));
    await handle(batch(["a", "b"]));
    // Neither event's write was in the database while the batch ran: both went at its end.
    expect(seenBefore).toEqual(["a:0", "b:0"]);
    expect(await written()).toEqual(["a", "b"]);
    const failure: unknown = await handle(batch(["c", "bad", "d"])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BatchFailure);
    // Applied again flushing after each event: "c" is applied, "bad" fails, "d" waits behind it.
    expect([...(failure as BatchFailure).applied]).toEqual([0]);
    expect(await written()).toEqual(["a", "b", "c"]);
  });

  it("do nothing for a delivery already handled (the inbox)", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const { definition, applied } = probe(t, "inbox_probe", "never");
    const handle = inboxHandler(ctx, definition);
    const message = {
      subject: "network.notification.pushed",
      data: new TextEncoder().encode(
        JSON.stringify({ notification: { id: "ntf_1", title: `${marker}once`, future_field: 1 } }),
      ),
      headers: { "Nats-Msg-Id": `evt_dup_${Date.now()}` },
    };
    await handle([message]);
    await handle([message]);
    expect(await applied()).toEqual(["once"]);
  });
});
