import { create } from "@bufbuild/protobuf";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { APPLICATION_NAME } from "../../services/kit/events/outbox-wake.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, need } from "../support/skips.js";
import { until } from "../support/until.js";

/** Far longer than any test waits: an event delivered in time was woken for, not polled. */
const POLL_MS = "60000";
/** Delivery well under the poll: the commit, a pass and NATS, on a busy machine. */
const WOKEN_WITHIN_MS = 2_000;

const SERVERS = need(
  Boolean(process.env.DATABASE_URL && process.env.NATS_URL),
  "DATABASE_URL or NATS_URL is unset: no PostgreSQL or NATS server",
);

describeWith(SERVERS, "outbox relays woken by commits (LISTEN/NOTIFY), the poll a minute away", () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let nc: NatsConnection;
  const arrived = new Map<string, number>();
  beforeAll(async () => {
    a = await startTestPlatform({ services: ["network"], env: { PF_OUTBOX_POLL_MS: POLL_MS } });
    // A second instance of network on the same database and stream.
    b = await startTestPlatform({
      services: ["network"],
      env: { DATABASE_URL: a.platform.databaseUrl, PF_NATS_NAMESPACE: a.events!.namespace, PF_OUTBOX_POLL_MS: POLL_MS },
    });
    nc = await connect({ servers: process.env.NATS_URL });
    nc.subscribe(a.events!.subject("network.notification.pushed"), {
      callback: (_e, m) => void arrived.set(m.headers?.get("Nats-Msg-Id") ?? "", Date.now()),
    });
    await nc.flush();
    await settled(a);
  });
  afterAll(async () => {
    await nc?.close();
    await b?.stop();
    await a?.stop();
  });

  const commit = (on: TestPlatform, title: string) =>
    network(on).transaction((em) =>
      recordEvent(
        em,
        "network.notification.pushed",
        NotificationPushedSchema,
        create(NotificationPushedSchema, { notification: { title } }),
      ),
    );
  /** Commits on `on` and answers how long its event took to arrive. */
  const delivery = async (on: TestPlatform, title: string) => {
    const started = Date.now();
    const id = await commit(on, title);
    await until(() => arrived.has(id), 10_000);
    return arrived.get(id)! - started;
  };
  /** A commits (taking the relay lease, kept a while), then B: B's event is relayed by A, woken by B. */
  const relayedAcross = async (round: string) => {
    expect(await delivery(a, `${round} on a`)).toBeLessThan(WOKEN_WITHIN_MS);
    expect(await delivery(b, `${round} on b`)).toBeLessThan(WOKEN_WITHIN_MS);
  };

  it("an event committed by an instance that does not hold the relay lease is published at once by the one that does", async () => {
    await relayedAcross("first");
  });

  it("a listener whose connection the server terminated connects again and is woken again", async () => {
    const listeners = async () =>
      (
        await network(a)
          .orm.em.getConnection()
          .execute<{ pid: number }[]>(
            `select pid from pg_stat_activity where datname = current_database() and application_name = ?`,
            [APPLICATION_NAME],
          )
      ).map((row) => row.pid);
    const before = await listeners();
    expect(before).toHaveLength(2);
    await network(a)
      .orm.em.getConnection()
      .execute(`select pg_terminate_backend(pid) from pg_stat_activity where pid in (?)`, [before]);
    await until(async () => {
      const now = await listeners();
      return now.length === 2 && now.every((pid) => !before.includes(pid));
    }, 10_000);
    await settled(a);
    await relayedAcross("after the reconnect");
  });

  it("a rolled-back transaction publishes nothing", async () => {
    let id = "";
    await expect(
      network(b).transaction(async (em) => {
        id = await recordEvent(
          em,
          "network.notification.pushed",
          NotificationPushedSchema,
          create(NotificationPushedSchema, { notification: { title: "rolled back" } }),
        );
        throw new Error("the change fails after writing its event");
      }),
    ).rejects.toThrow("the change fails");
    // A later commit is published: had the rolled-back one been sent, it would be there first.
    await delivery(b, "after the rollback");
    expect(arrived.has(id)).toBe(false);
    const rows = await network(a).orm.em.getConnection().execute(`select id from network.outbox where id = ?`, [id]);
    expect(rows).toEqual([]);
  });
});

/**
 * Both processes listen (each wake connection's last statement, after its LISTEN, is done: it then wakes its
 * relay) and a relay has made a pass (its lease row is there).
 */
async function settled(on: TestPlatform): Promise<void> {
  const connection = network(on).orm.em.getConnection();
  await until(async () => {
    const [row] = await connection.execute<{ listening: number; passes: number }[]>(
      `select (select count(*)::int from pg_stat_activity where datname = current_database() and application_name = ?
                 and state = 'idle' and query like 'select pg_backend_pid()%') as listening,
              (select count(*)::int from network.leases where name = 'kit.outbox-relay') as passes`,
      [APPLICATION_NAME],
    );
    return row.listening === 2 && row.passes === 1;
  }, 10_000);
}

function network(t: TestPlatform): ServiceContext {
  return t.platform.contexts.get("network")!;
}
