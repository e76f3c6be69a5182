import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, NATS } from "../support/skips.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";

const natsUrl = process.env.NATS_URL;

/** Collects what a real NATS subscriber receives on a subject. */
async function subscriber(nc: NatsConnection, subject: string) {
  const received: { subject: string; headers: Record<string, string>; body: any }[] = [];
  const subscription = nc.subscribe(subject, {
    callback: (_error, message) => {
      const headers = Object.fromEntries([...(message.headers ?? [])].map(([name, values]) => [name, values[0]]));
      received.push({ subject: message.subject, headers, body: message.json() });
    },
  });
  await nc.flush();
  return { received, stop: () => subscription.unsubscribe() };
}

describeWith(NATS, "network events on NATS", () => {
  let nc: NatsConnection;
  let proxy: TcpProxy;
  let t: TestPlatform;
  let token: string;

  beforeAll(async () => {
    nc = await connect({ servers: natsUrl });
    const target = new URL(natsUrl!.replace(/^nats:/, "http:"));
    proxy = new TcpProxy(target.hostname, Number(target.port || 4222));
    await proxy.open();
    t = await startTestPlatform({ services: ["network"], env: { NATS_URL: `nats://127.0.0.1:${proxy.port}` } });
    token = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
  });
  afterAll(async () => {
    await t?.stop();
    await proxy?.cut();
    await nc?.close();
  });

  it("a subscriber receives network.notification.pushed with its id and schema headers", async () => {
    const recipient = `usr_ev${Date.now().toString(36)}`;
    const sub = await subscriber(nc, t.events!.subject("network.notification.pushed"));
    const answer = await t.http("POST", "/network/internal/notifications/mention", {
      token,
      body: { recipients: [recipient], title: "Hi" },
    });
    expect(answer.status).toBe(201);
    await until(() => sub.received.some((m) => m.body.notification.recipient === recipient));
    const event = sub.received.find((m) => m.body.notification.recipient === recipient)!;
    expect(event.headers["Nats-Msg-Id"]).toMatch(/^evt_/);
    expect(event.headers["Pf-Schema"]).toBe("network.notification-pushed@1");
    expect(event.body.notification).toMatchObject({
      id: answer.body.notifications[0].id,
      kind: "mention",
      title: "Hi",
    });
    sub.stop();
  });

  it("events written while NATS is unreachable arrive after it comes back", async () => {
    const sub = await subscriber(nc, t.events!.subject("network.notification.pushed"));
    await proxy.cut();
    const recipients = Array.from({ length: 3 }, (_, i) => `usr_out${i}x${Date.now().toString(36)}`);
    for (const recipient of recipients) {
      const answer = await t.http("POST", "/network/internal/notifications/mention", {
        token,
        body: { recipients: [recipient], title: "While down" },
      });
      expect(answer.status).toBe(201);
    }
    // The platform has seen NATS go: what it wrote meanwhile waits in the outbox, unsent.
    await until(() => !t.platform.bus.connected());
    const [unsent] = await t.platform.contexts
      .get("network")!
      .orm.em.getConnection()
      .execute<{ n: number }[]>(`select count(*)::int as n from network.outbox where sent_at is null and payload ~ ?`, [
        recipients.join("|"),
      ]);
    expect(unsent.n).toBe(3);
    expect(sub.received.filter((m) => recipients.includes(m.body.notification.recipient))).toHaveLength(0);
    await proxy.open();
    await until(() => recipients.every((r) => sub.received.some((m) => m.body.notification.recipient === r)), 30_000);
    // Sent in the order written (a core subscriber may also see a resend that the stream itself drops by Nats-Msg-Id).
    const arrived = sub.received
      .filter((m) => recipients.includes(m.body.notification.recipient))
      .map((m) => m.body.notification.recipient);
    expect([...new Set(arrived)]).toEqual(recipients);
    sub.stop();
  });
});
