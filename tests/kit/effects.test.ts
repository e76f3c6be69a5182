import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { effect, effectRefusals, type EffectHost } from "../../services/kit/effects/effect.js";
import { startConsumer } from "../../services/kit/events/consumer.js";
import { bearer } from "../../services/kit/rpc/clients.js";
import { durableCaughtUp } from "../support/nats.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, NATS } from "../support/skips.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";

/**
 * The owner is network: a person's mention writes `network.notification.pushed` in its outbox. The effect, a
 * durable consumer of network's own, applies each of this file's notifications as a coin change in the callee
 * (network's CreditCoins / DebitCoins, idempotent by key) over real gRPC through a TCP proxy the test cuts: the
 * callee down, or applying a change whose answer never arrives.
 */
const marker = `eff-${Date.now().toString(36)}-`;
const runs = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

let t: TestPlatform;
let proxy: TcpProxy;
let callee: Client<typeof NetworkService>;
let mention: string;
let coins: string;
let proxyUp = true;

/** The callee unreachable (connections refused) or reachable again (new connections: the old ones lost bytes). */
async function reachable(up: boolean): Promise<void> {
  if (up === proxyUp) return;
  proxyUp = up;
  if (up) await proxy.open();
  else await proxy.cut();
}

beforeAll(async () => {
  t = await startTestPlatform({ services: ["network"] });
  proxy = new TcpProxy("127.0.0.1", Number(new URL(t.platform.rpcUrl).port));
  await proxy.open();
  coins = await t.token({
    kind: "service",
    svc: "community",
    caps: ["network.coins.credit", "network.coins.debit"],
    app_id: "app_main",
  });
  mention = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
  const transport = createGrpcTransport({
    baseUrl: `http://127.0.0.1:${proxy.port}`,
    interceptors: [bearer(async () => coins)],
  });
  callee = createClient(NetworkService, transport);
});
afterAll(async () => {
  await reachable(false);
  await t?.stop();
});

/** Records what each delivery did, by the notification's title. */
function coinEffect(name: string) {
  const attempts = new Map<string, number>();
  const applied: string[] = [];
  const definition = effect<EffectHost, typeof NotificationPushedSchema>({
    name,
    subject: "network.notification.pushed",
    event: NotificationPushedSchema,
    from: "new",
    async apply(event, _ctx, key) {
      const title = event.notification?.title ?? "";
      // Only this effect's own events: another test's effect may still be running on the same stream.
      if (!title.startsWith(`${marker}${name}:`)) return;
      attempts.set(title, (attempts.get(title) ?? 0) + 1);
      const [, change, subject, amount] = title.slice(marker.length).split(":");
      const request = { subject, amount: BigInt(amount), idempotencyKey: key, reason: "effect test" };
      await (change === "debit"
        ? callee.debitCoins(request, { timeoutMs: 1500 })
        : callee.creditCoins(request, { timeoutMs: 1500 }));
      applied.push(title);
    },
  });
  return { definition, attempts: (title: string) => attempts.get(title) ?? 0, applied };
}

async function push(title: string): Promise<void> {
  const answer = await t.http("POST", "/network/internal/notifications/mention", {
    token: mention,
    body: { recipients: ["usr_effect"], title },
  });
  expect(answer.status).toBe(201);
}

/** The person's balance, read by crediting 1 more under a fresh key (the callee has no read of its own). */
async function balancePlusOne(subject: string): Promise<bigint> {
  const answer = await t.http("POST", "/network/internal/coins/credit", {
    token: coins,
    body: { subject, amount: 1, idempotency_key: `probe-${runs()}` },
  });
  expect(answer.status).toBe(200);
  return BigInt(answer.body.balance);
}

async function removeDurable(durable: string): Promise<void> {
  if (!t.events) return;
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    await (await jetstreamManager(nc)).consumers.delete(t.events.stream("network"), durable).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

describeWith(NATS, "effect() on JetStream", () => {
  it("drains a backlog in batches, in order and once, and sets aside an event that keeps failing", async () => {
    const name = `eff_batch_${runs()}`;
    const applied: string[] = [];
    let poisonTries = 0;
    const definition = effect<EffectHost, typeof NotificationPushedSchema>({
      name,
      subject: "network.notification.pushed",
      event: NotificationPushedSchema,
      from: "new",
      maxFailures: 2,
      async apply(event) {
        const title = event.notification?.title ?? "";
        if (!title.startsWith(`${marker}${name}:`)) return;
        if (title.endsWith(":poison")) {
          poisonTries++;
          throw new Error("the effect's own bug on this event");
        }
        applied.push(title);
      },
    });
    const ctx = t.platform.contexts.get("network")!;
    // What the effect runs on the owner's database, counted: its transactions and its statements on a fork.
    let inboxWork = 0;
    const bound = <T extends object>(target: T, property: string | symbol) => {
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    };
    const em = new Proxy(ctx.orm.em, {
      get: (target, property) => (property === "fork" ? () => (inboxWork++, target.fork()) : bound(target, property)),
    });
    const orm = new Proxy(ctx.orm, { get: (target, property) => (property === "em" ? em : bound(target, property)) });
    const counted = new Proxy(ctx, {
      get(target, property) {
        if (property === "orm") return orm;
        if (property === "transaction")
          return (work: Parameters<typeof ctx.transaction>[0]) => (inboxWork++, target.transaction(work));
        return bound(target, property);
      },
    });
    // Made, then stopped: the backlog piles up while no instance applies it.
    await (
      await startConsumer(ctx, definition)
    )();
    const titles = Array.from({ length: 120 }, (_, i) => `${marker}${name}:${i === 10 ? "poison" : i}`);
    for (const title of titles) await push(title);
    const stop = await startConsumer(counted, definition);
    try {
      const expected = titles.filter((title) => !title.endsWith(":poison"));
      await until(() => applied.length >= expected.length, 30_000);
      expect(applied).toEqual(expected);
      // Batches: a statement reading which are handled and one marking them, a few for 120 events (one each was two).
      expect(inboxWork).toBeGreaterThan(0);
      expect(inboxWork).toBeLessThan(titles.length / 4);
      expect(poisonTries).toBe(2);
      const [refusal] = await ctx.transaction((em) => effectRefusals(em, name));
      expect(refusal).toMatchObject({
        status: 500,
        code: "effect.failed",
        detail: "the effect's own bug on this event",
      });
    } finally {
      await stop();
      await removeDurable(`network_${name}`);
    }
  }, 60_000);

  it("retries while the callee is down and when its answer is lost, and applies the change exactly once", async () => {
    const name = `eff_once_${runs()}`;
    const { definition, attempts, applied } = coinEffect(name);
    const ctx = t.platform.contexts.get("network")!;
    const stop = await startConsumer(ctx, definition);
    const subject = `usr_e${runs()}`;
    const title = `${marker}${name}:credit:${subject}:5`;
    try {
      await reachable(false);
      await push(title);
      await until(() => attempts(title) >= 2, 20_000);
      // Back, but every answer is lost on the way: the callee applies the credit, the effect cannot know.
      proxy.holdAnswers = true;
      await reachable(true);
      await until(() => attempts(title) >= 4, 30_000);
      expect(applied).toEqual([]);
      proxy.holdAnswers = false;
      proxy.reset();
      await until(() => applied.includes(title), 30_000);
      // 5 once (not once per attempt that reached it), plus the probe's 1.
      expect(await balancePlusOne(subject)).toBe(6n);
    } finally {
      proxy.holdAnswers = false;
      await reachable(true);
      await stop();
      await removeDurable(`network_${name}`);
    }
  }, 90_000);

  it("records a definite refusal once, does not retry it, and goes on with the events after it", async () => {
    const name = `eff_refused_${runs()}`;
    const { definition, attempts, applied } = coinEffect(name);
    const ctx = t.platform.contexts.get("network")!;
    const stop = await startConsumer(ctx, definition);
    const subject = `usr_r${runs()}`;
    const refused = `${marker}${name}:debit:${subject}:1000`;
    const after = `${marker}${name}:credit:${subject}:3`;
    try {
      await push(refused);
      await push(after);
      await until(() => applied.includes(after), 20_000);
      const rows = await ctx.transaction((em) => effectRefusals(em, name));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        effect: name,
        subject: "network.notification.pushed",
        status: 409,
        code: "insufficient_funds",
      });
      // Every event taken and acknowledged, the refused one included: nothing comes again.
      await until(() => durableCaughtUp(process.env.NATS_URL!, t.events!, "network", `network_${name}`));
      expect(attempts(refused)).toBe(1);
      expect(await balancePlusOne(subject)).toBe(4n);
    } finally {
      await stop();
      await removeDurable(`network_${name}`);
    }
  }, 60_000);

  it("loses nothing when the owner's process stops mid-retry: another instance applies it, once", async () => {
    const name = `eff_restart_${runs()}`;
    const first = coinEffect(name);
    const ctx = t.platform.contexts.get("network")!;
    const stopFirst = await startConsumer(ctx, first.definition);
    const subject = `usr_s${runs()}`;
    const title = `${marker}${name}:credit:${subject}:7`;
    // A second instance of the owner: same database, same event stream, another process's consumer.
    const second = await startTestPlatform({
      services: ["network"],
      env: { DATABASE_URL: t.platform.databaseUrl, PF_NATS_NAMESPACE: t.events!.namespace, PF_GATEWAY: "0" },
    });
    try {
      await reachable(false);
      await push(title);
      await until(() => first.attempts(title) >= 1, 20_000);
      await stopFirst();
      const again = coinEffect(name);
      const stopSecond = await startConsumer(second.platform.contexts.get("network")!, again.definition);
      try {
        await reachable(true);
        await until(() => again.applied.includes(title), 40_000);
        expect(first.applied).toEqual([]);
        expect(await balancePlusOne(subject)).toBe(8n);
      } finally {
        await stopSecond();
      }
    } finally {
      await reachable(true);
      await second.stop();
      await removeDurable(`network_${name}`);
    }
  }, 90_000);
});
