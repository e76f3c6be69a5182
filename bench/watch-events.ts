import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { DealsService } from "../gen/pf/deals/v1/deals_pb.js";
import { WatchKind } from "../gen/pf/deals/v1/watches_pb.js";
import { WatchMatchedSchema } from "../gen/pf/deals/v1/events_pb.js";
import { clientWithDefaults } from "../services/kit/rpc/clients.js";
import { recordEvents } from "../services/kit/events/outbox.js";
import type { ServiceContext } from "../services/kit/runtime/module.js";
import { percentile, type Benchmark, type LoadResult, type LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";

/** Writers recording observations at once (BENCH_EVENT_WRITERS). */
const WRITERS = Number(process.env.BENCH_EVENT_WRITERS || 20);
/** Keyword watches every observation matches (BENCH_WATCHES): each observation makes this many events. */
const WATCHES = Number(process.env.BENCH_WATCHES || 10);
/** Each writer's pause between observations (BENCH_WRITER_PAUSE_MS): the latency is measured under a steady load, not a backlog. */
const PAUSE_MS = Number(process.env.BENCH_WRITER_PAUSE_MS || 50);
/** Events written at once for the relay's throughput (BENCH_RELAY_BURST). */
const BURST = Number(process.env.BENCH_RELAY_BURST || 20_000);

/**
 * `deals.watch.matched` end to end: observations recorded in process by
 * WRITERS writers (one offer each), each matching WATCHES keyword watches; every
 * event timed from its observation's commit (the RPC's answer) to its arrival
 * at a plain NATS subscriber; the relay's throughput is events arrived per
 * second under that steady load; then the relay's own throughput on a burst.
 * Goals: p99 under 50 ms, at least 5,000 events/s.
 */
export const watchEvents: Benchmark = {
  name: "watch events",
  async run(settings: LoadSettings) {
    const natsUrl = process.env.NATS_URL;
    if (!natsUrl) return { rows: [], notes: ["skipped: set NATS_URL to measure events on a real NATS server"] };
    const bench = await startBenchPlatform({ PF_SERVICES: "deals", PF_DB_POOL: String(WRITERS) });
    const nc = await connect({ servers: natsUrl });
    try {
      const caps = ["deals.offer.submit", "deals.offer.update", "deals.watch.create"];
      const token = await bench.platform.mintToken({ kind: "service", svc: "web", caps });
      const run = Date.now().toString(36);
      const as = (person: string) =>
        clientWithDefaults(DealsService, bench.platform.transport, {
          headers: { authorization: `Bearer ${token}`, "x-pf-subject": person },
        });
      const word = `benchword${run}`;
      for (let i = 0; i < WATCHES; i++)
        await as(`usr_watcher${i}x${run}`).createWatch({ kind: WatchKind.KEYWORD, keyword: word });
      // Each writer observes its own offer: observations of one offer queue on its row.
      const offers = await Promise.all(
        Array.from(
          { length: WRITERS },
          async (_, w) =>
            (
              await as(`usr_poster${w}x${run}`).submitOffer({
                link: `https://shop.example/${run}/${w}`,
                title: `A ${word} deal`,
              })
            ).offer!.id,
        ),
      );

      const committed = new Map<string, number>();
      const latencies: number[] = [];
      let arrived = 0;
      let measuring = false;
      const subscription = nc.subscribe("deals.watch.matched", {
        callback: (_error, message) => {
          const observation: string = message.json<{ observation: { id: string } }>().observation.id;
          const at = committed.get(observation);
          if (!measuring) return;
          arrived++;
          if (at !== undefined) latencies.push(performance.now() - at);
        },
      });
      await nc.flush();

      let stop = false;
      const writer = async (w: number) => {
        const observer = as(`usr_observer${w}x${run}`);
        let n = 0;
        while (!stop) {
          const answer = await observer.recordObservation({
            id: offers[w],
            observation: { price: { minorUnits: BigInt(1000 + (n++ % 500)), currency: "USD" } },
          });
          if (measuring) committed.set(answer.observation!.id, performance.now());
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      await new Promise((resolve) => setTimeout(resolve, settings.warmup * 1000));
      measuring = true;
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, settings.duration * 1000));
      stop = true;
      await Promise.all(writers);
      const expected = committed.size * WATCHES;
      const drainBy = performance.now() + 30_000;
      while (latencies.length < expected && performance.now() < drainBy)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const elapsed = (performance.now() - started) / 1000;
      subscription.unsubscribe();

      // An event can arrive before its writer records the commit time: those are counted, not timed.
      const sorted = Float64Array.from(latencies).sort();
      const row: LoadResult = {
        label: `observation commit → deals.watch.matched (${bench.database})`,
        requests: arrived,
        rps: arrived / elapsed,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        failures: Math.max(0, expected - arrived),
        cpuPerRequest: NaN,
      };
      const relay = await relayBurst(bench.platform.contexts.get("deals")!, nc);
      return {
        rows: [row, relay],
        notes: [
          `${committed.size} observations × ${WATCHES} watches from ${WRITERS} writers pausing ${PAUSE_MS} ms: latency ` +
            `p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms (goal < 50 ms); ${row.failures} not seen`,
          `relay: a burst of ${BURST} events published in ${(BURST / relay.rps).toFixed(1)} s: ${relay.rps.toFixed(0)} events/s (goal ≥ 5000); ` +
            `${relay.failures} not seen`,
        ],
      };
    } finally {
      await nc.close();
      await bench.stop();
    }
  },
};

/**
 * The relay's throughput on its own: BURST deals.watch.matched events of
 * real size written by one transaction, timed from its commit to the last
 * arrival at a plain NATS subscriber.
 */
async function relayBurst(ctx: ServiceContext, nc: NatsConnection): Promise<LoadResult> {
  const marker = `burst${Date.now().toString(36)}`;
  const event = create(WatchMatchedSchema, {
    watchId: marker,
    owner: "usr_bench",
    kind: WatchKind.KEYWORD,
    offer: {
      id: "off_bench",
      link: "https://shop.example/bench",
      title: "A bench deal with a title of usual length",
      description: "x".repeat(400),
    },
    observation: {
      id: "obs_bench",
      offerId: "off_bench",
      observedBy: "usr_bench",
      price: { minorUnits: 1999n, currency: "USD" },
    },
    occurredAt: timestampNow(),
  });
  let arrived = 0;
  let last = 0;
  const subscription = nc.subscribe("deals.watch.matched", {
    callback: (_error, message) => {
      if (message.json<{ watch_id: string }>().watch_id !== marker) return;
      arrived++;
      last = performance.now();
    },
  });
  await nc.flush();
  const chunk = 1000;
  await ctx.transaction(async (em) => {
    for (let written = 0; written < BURST; written += chunk) {
      await recordEvents(
        em,
        "deals.watch.matched",
        WatchMatchedSchema,
        Array.from({ length: Math.min(chunk, BURST - written) }, () => event),
      );
    }
  });
  // Timed from the commit: the relay sees nothing before it.
  const started = performance.now();
  const drainBy = performance.now() + 120_000;
  while (arrived < BURST && performance.now() < drainBy) await new Promise((resolve) => setTimeout(resolve, 20));
  subscription.unsubscribe();
  const seconds = (last - started) / 1000;
  return {
    label: "outbox relay, one burst → subscriber",
    requests: arrived,
    rps: arrived / seconds,
    p50: NaN,
    p99: NaN,
    failures: BURST - arrived,
    cpuPerRequest: NaN,
  };
}
