import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { NetworkService } from "../gen/pf/network/v1/network_pb.js";
import { NotificationPushedSchema } from "../gen/pf/network/v1/events_pb.js";
import { effect, type EffectHost } from "../services/kit/effects/effect.js";
import { startConsumer } from "../services/kit/events/consumer.js";
import { clientWithDefaults } from "../services/kit/rpc/clients.js";
import { percentile, type Benchmark, type LoadResult, type LoadSettings } from "./load.js";
import { benchEvents, startBenchPlatform } from "./platform.js";

/** Writers running while the backlog drains (BENCH_EFFECT_WRITERS). */
const WRITERS = Number(process.env.BENCH_EFFECT_WRITERS || 16);
/** Effects waiting when their consumer starts (BENCH_EFFECT_BACKLOG). */
const BACKLOG = Number(process.env.BENCH_EFFECT_BACKLOG || 2_000);
/** The objects the effects change: each one's effects in order, different ones side by side. */
const ACCOUNTS = 64;

/**
 * An effect consumer catching up under load (issue 25): a backlog of BACKLOG
 * notifications piles up while its effect is stopped (as after a NATS outage),
 * then the effect starts while WRITERS writers credit coins as fast as they
 * are answered. Each effect is a coin credit in network through its client,
 * with the effect's idempotency key, as blog's and community's effects call
 * community and space. Timed from the effect's start to the last effect
 * applied; afterwards the balance it credited must be the backlog exactly.
 */
export const effectsUnderLoad: Benchmark = {
  name: "effects under load",
  async run(settings: LoadSettings) {
    if (!process.env.NATS_URL) return { rows: [], notes: ["skipped: effects are batched on JetStream; set NATS_URL"] };
    const bench = await startBenchPlatform();
    const nc = await connect({ servers: process.env.NATS_URL });
    let durable: string | undefined;
    try {
      const ctx = bench.platform.contexts.get("network")!;
      const as = async (caps: string[]) => {
        const token = await bench.platform.mintToken({ kind: "service", svc: "community", caps, app_id: "app_main" });
        return clientWithDefaults(NetworkService, bench.platform.transport, {
          headers: { authorization: `Bearer ${token}` },
        });
      };
      const coins = await as(["network.coins.credit"]);
      const pusher = await as(["network.notifications.push"]);
      const run = `fx${Date.now().toString(36)}`;
      // The effects change ACCOUNTS accounts, each in order, side by side.
      const account = (title: string) => `usr_${run}${Number(title.slice(title.lastIndexOf("-") + 1)) % ACCOUNTS}`;
      const times: number[] = [];
      const definition = effect<EffectHost, typeof NotificationPushedSchema>({
        name: `bench_${run}`,
        subject: "network.notification.pushed",
        event: NotificationPushedSchema,
        from: "new",
        orderKey: (event) => account(event.notification?.title ?? ""),
        async apply(event, _ctx, key) {
          const title = event.notification?.title ?? "";
          if (!title.startsWith(run)) return;
          const started = performance.now();
          await coins.creditCoins({ subject: account(title), amount: 1n, idempotencyKey: key, reason: "bench" });
          times.push(performance.now() - started);
        },
      });
      // The durable made, then stopped: the backlog waits in the stream.
      await (
        await startConsumer(ctx, definition)
      )();
      let pushed = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (pushed < BACKLOG)
            await pusher.pushNotification({ kind: "bench", recipients: ["usr_bench1"], title: `${run}-${pushed++}` });
        }),
      );
      durable = `network_${definition.name}`;
      const drainBy = performance.now() + 60_000;
      while (((await ctx.bus.pending?.(definition.subject, durable)) ?? 0) < BACKLOG && performance.now() < drainBy)
        await new Promise((resolve) => setTimeout(resolve, 50));

      let stop = false;
      let writes = 0;
      const writers = Array.from({ length: WRITERS }, async (_, i) => {
        while (!stop) {
          const key = `${run}-w${i}-${writes++}`;
          await coins.creditCoins({ subject: `usr_${run}w${i}`, amount: 1n, idempotencyKey: key, reason: "load" });
        }
      });
      // The writers at full pace before the effect starts.
      await new Promise((resolve) => setTimeout(resolve, settings.warmup * 1000));
      const cpu = process.cpuUsage();
      const started = performance.now();
      const stopEffect = await startConsumer(ctx, definition);
      while (times.length < BACKLOG && performance.now() < started + 120_000)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const elapsed = (performance.now() - started) / 1000;
      const writesMeanwhile = writes;
      const { user, system } = process.cpuUsage(cpu);
      stop = true;
      await Promise.all(writers);
      await stopEffect();
      let credited = 0n;
      for (let i = 0; i < ACCOUNTS; i++) {
        const probe = { subject: `usr_${run}${i}`, amount: 1n, idempotencyKey: `${run}-probe${i}` };
        credited += (await coins.creditCoins(probe)).balance - 1n;
      }

      const sorted = Float64Array.from(times).sort();
      const row: LoadResult = {
        label: `effects/s while ${WRITERS} writers run (${bench.database})`,
        requests: times.length,
        rps: times.length / elapsed,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        // Every effect applied, each once: the accounts were credited the backlog (each probe's 1 left out).
        failures: BACKLOG - Math.min(times.length, BACKLOG) + (credited === BigInt(BACKLOG) ? 0 : 1),
        cpuPerRequest: (user + system) / Math.max(1, times.length),
      };
      return {
        rows: [row],
        notes: [
          `a backlog of ${BACKLOG} effects drained in ${elapsed.toFixed(1)} s: ${row.rps.toFixed(0)} effects/s (goal ≥ 200), ` +
            `the effect's call p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms; meanwhile ${WRITERS} writers ` +
            `made ${(writesMeanwhile / elapsed).toFixed(0)} writes/s; credited ${credited} of ${BACKLOG}`,
        ],
      };
    } finally {
      // A durable outlives its process by design; the bench's own must not pile up on the server.
      if (durable)
        await (await jetstreamManager(nc)).consumers.delete(benchEvents.stream("network"), durable).catch(() => false);
      await nc.close();
      await bench.stop();
    }
  },
};
