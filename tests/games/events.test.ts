import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { caughtUp } from "../support/nats.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";
import { gamesCall, installed, managerToken } from "./support.js";

interface Received {
  subject: string;
  id: string;
  // Test bodies are read field by field.
  body: any;
}

/**
 * A game server's view: a JetStream consumer of the games stream filtered on
 * `games.mod.*` (one wildcard token), from now on. It sees what the stream
 * keeps, resends dropped by their Nats-Msg-Id: what "exactly once" is asserted against.
 */
async function subscribeToMods(nc: NatsConnection, t: TestPlatform) {
  const events = t.events!;
  const consumer = await jetstream(nc).consumers.get(events.stream("games"), {
    filter_subjects: events.subject("games.mod.*"),
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date().toISOString(),
  });
  const messages = await consumer.consume();
  const received: Received[] = [];
  const prefix = events.subject("");
  void (async () => {
    for await (const message of messages)
      received.push({
        subject: message.subject.slice(prefix.length),
        id: message.headers?.get("Nats-Msg-Id") ?? "",
        body: message.json(),
      });
  })();
  return { received, caughtUp: () => caughtUp(consumer, () => received.length), stop: () => void messages.stop() };
}

describeWith(NATS, "games.mod.* on NATS", () => {
  let nc: NatsConnection;
  let first: TestPlatform;
  let second: TestPlatform | undefined;
  let subscriber: Awaited<ReturnType<typeof subscribeToMods>>;

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL });
    first = await startTestPlatform({ services: ["games"] });
    subscriber = await subscribeToMods(nc, first);
  });
  afterAll(async () => {
    subscriber?.stop();
    await second?.stop();
    await first?.stop();
    await nc?.close();
  });

  it("a subscriber on games.mod.* receives every manage action exactly once, in order per install, across a relay restart", async () => {
    const as = gamesCall(first, await managerToken(first));
    const a = await installed(first, await managerToken(first));
    const b = await installed(first, await managerToken(first));
    await as("POST", `/mods/${a.id}/grants`, { capability: "world.read" });
    await as("POST", `/mods/${a.id}/enable`, {});
    await as("POST", `/mods/${b.id}/grants`, { capability: "chat.send" });
    const { received } = subscriber;
    await until(() => received.length === 5);

    // The relay "crashes" after publishing but before marking sent: every event goes again from the new instance.
    const em = first.platform.contexts.get("games")!.orm.em;
    await em.getConnection().execute(`update ${qualified(em, "outbox")} set sent_at = null`);
    // One more action just before the stop: relayed by this instance or by the next, never by both.
    await as("POST", `/mods/${b.id}/enable`, {});
    const databaseUrl = first.platform.databaseUrl;
    await first.platform.stop();
    second = await startTestPlatform({
      services: ["games"],
      env: { DATABASE_URL: databaseUrl, PF_NATS_NAMESPACE: first.events!.namespace },
    });
    const ctx = second.platform.contexts.get("games")!;
    const unsent = async () =>
      (
        await ctx.orm.em
          .getConnection()
          .execute<{ n: string }[]>(
            `select count(*) as n from ${qualified(ctx.orm.em, "outbox")} where sent_at is null`,
          )
      )[0].n;
    await until(async () => (await unsent()) === "0");

    const again = gamesCall(second, await managerToken(second));
    await again("DELETE", `/mods/${a.id}/grants/world.read`);
    await again("POST", `/mods/${a.id}/disable`, { reason: "testing" });
    await again("POST", `/mods/${a.id}/revoke`, {});
    await again("POST", `/mods/${b.id}/revoke`, {});
    await until(() => received.length >= 10);
    // Everything the stream holds for the subscriber has arrived: a resend that slipped through would be here.
    await until(() => subscriber.caughtUp());

    expect(received).toHaveLength(10);
    expect(new Set(received.map((m) => m.id)).size).toBe(10);
    const of = (id: string) => received.filter((m) => m.body.install_id === id);
    expect(of(a.id).map((m) => m.subject)).toEqual([
      "games.mod.installed",
      "games.mod.granted",
      "games.mod.enabled",
      "games.mod.ungranted",
      "games.mod.disabled",
      "games.mod.revoked",
    ]);
    expect(of(b.id).map((m) => m.subject)).toEqual([
      "games.mod.installed",
      "games.mod.granted",
      "games.mod.enabled",
      "games.mod.revoked",
    ]);
    expect(of(a.id).map((m) => m.body.revision)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(of(b.id).map((m) => m.body.revision)).toEqual([1, 2, 3, 4]);
    for (const m of received) expect(m.body.action).toBe(m.subject.slice("games.mod.".length));
    expect(of(a.id)[2].body).toMatchObject({
      status: "MOD_STATUS_ENABLED",
      granted_capabilities: ["world.read"],
      active_capabilities: ["world.read"],
      game: "arena",
      content_path: `/api/v1/mods/${a.id}`,
    });
    expect(of(a.id)[5].body).toMatchObject({ status: "MOD_STATUS_REVOKED", active_capabilities: [] });
  });
});
