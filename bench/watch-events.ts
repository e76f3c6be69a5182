import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { DealsService } from "../gen/pf/deals/v1/deals_pb.js";
import { WatchKind } from "../gen/pf/deals/v1/watches_pb.js";
import { WatchMatchedSchema } from "../gen/pf/deals/v1/events_pb.js";
import { clientWithDefaults } from "../services/kit/rpc/clients.js";
import { recordEvents } from "../services/kit/events/outbox.js";
import type { ServiceContext } from "../services/kit/service/module.js";
import { percentile, type Benchmark, type LoadResult, type LoadSettings } from "./load.js";
import { benchEvents, startBenchPlatform } from "./platform.js";
import { Arrivals, countInStream, streamEnd, type StreamCount } from "./event-count.js";
import { profiling, startProfile } from "./profile.js";

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
 * Arrivals are matched to commits by observation and watch, and afterwards the
 * stream is read: every committed event must be there exactly once.
 * Goals: p99 under 25 ms, at least 5,000 events/s.
 */
export const watchEvents: Benchmark = {
  name: "watch events",
  async run(settings: LoadSettings) {
    const natsUrl = process.env.NATS_URL;
    if (!natsUrl) return { rows: [], notes: ["skipped: set NATS_URL to measure events on a real NATS server"] };
    // Each writer records far more observations than a person may in an hour: the limit is not what is measured.
    const bench = await startBenchPlatform({
      PF_SERVICES: "deals",
      PF_DB_POOL: String(WRITERS),
      PF_DEALS_OBSERVATIONS_PER_HOUR: "1000000",
    });
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
      const watches: string[] = [];
      for (let i = 0; i < WATCHES; i++) {
        const { result } = await as(`usr_watcher${i}x${run}`).createWatch({ kind: WatchKind.KEYWORD, keyword: word });
        if (result.case !== "watch") throw new Error("createWatch answered no watch");
        watches.push(result.value.id);
      }
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

      // Each event is known by its observation and watch; its commit time is the observation's answer.
      const committed = new Map<string, number>();
      const arrivals = new Arrivals();
      const subscription = nc.subscribe(benchEvents.subject("deals.watch.matched"), {
        callback: (_error, message) => arrivals.arrived(matchKey(message.json<WatchMatchedJson>())),
      });
      await nc.flush();
      const after = await streamEnd(nc, benchEvents.stream("deals"));

      let stop = false;
      let measuring = false;
      const writer = async (w: number) => {
        const observer = as(`usr_observer${w}x${run}`);
        let n = 0;
        while (!stop) {
          const answer = await observer.recordObservation({
            id: offers[w],
            observation: { price: { minorUnits: BigInt(1000 + (n++ % 500)), currency: "USD" } },
          });
          const at = performance.now();
          if (measuring) for (const watch of watches) committed.set(`${answer.observation!.id} ${watch}`, at);
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      await new Promise((resolve) => setTimeout(resolve, settings.warmup * 1000));
      measuring = true;
      const profile = profiling() ? await startProfile() : undefined;
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, settings.duration * 1000));
      stop = true;
      await Promise.all(writers);
      const drainBy = performance.now() + 30_000;
      // The whole check only once as many have arrived: every 20 ms over 20,000 keys it took 9% of the window's profile.
      while (!(arrivals.first.size >= committed.size && arrivals.all(committed)) && performance.now() < drainBy)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const elapsed = (performance.now() - started) / 1000;
      const hot = await profile?.();
      subscription.unsubscribe();
      const stream = await countInStream(
        nc,
        benchEvents.stream("deals"),
        benchEvents.subject("deals.watch.matched"),
        after,
        committed.keys(),
        (m) => matchKey(m.json<WatchMatchedJson>()),
      );

      const { sorted, early, notSeen } = arrivals.latencies(committed);
      const row: LoadResult = {
        label: `observation commit → deals.watch.matched (${bench.database})`,
        requests: committed.size - notSeen,
        rps: (committed.size - notSeen) / elapsed,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        failures: notSeen + stream.missing + stream.duplicated,
        cpuPerRequest: NaN,
        goal: { figure: "p99", below: 25 },
        profile: hot,
      };
      const relay = await relayBurst(bench.platform.contexts.get("deals")!, nc);
      return {
        rows: [row, relay.row],
        notes: [
          `${committed.size / WATCHES} observations × ${WATCHES} watches from ${WRITERS} writers pausing ${PAUSE_MS} ms: latency ` +
            `p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms (goal < 25 ms; ${early} arrived before their writer's answer: 0 ms); ` +
            `${notSeen} not seen (${arrivals.again} seen twice); the stream holds ${stream.missing} missing, ${stream.duplicated} more than once`,
          `relay: a burst of ${BURST} events published in ${(BURST / relay.row.rps).toFixed(1)} s: ${relay.row.rps.toFixed(0)} events/s (goal ≥ 10000); ` +
            `${relay.notSeen} not seen; the stream holds ${relay.stream.missing} missing, ${relay.stream.duplicated} more than once`,
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
async function relayBurst(
  ctx: ServiceContext,
  nc: NatsConnection,
): Promise<{ row: LoadResult; notSeen: number; stream: StreamCount }> {
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
  const arrivals = new Arrivals();
  let last = 0;
  const subscription = nc.subscribe(benchEvents.subject("deals.watch.matched"), {
    callback: (_error, message) => {
      if (message.json<{ watch_id: string }>().watch_id !== marker) return;
      arrivals.arrived(message.headers?.get("Nats-Msg-Id") ?? "");
      last = performance.now();
    },
  });
  await nc.flush();
  const after = await streamEnd(nc, benchEvents.stream("deals"));
  const chunk = 1000;
  const ids = await ctx.transaction(async (em) => {
    const written: string[] = [];
    while (written.length < BURST) {
      const events = Array.from({ length: Math.min(chunk, BURST - written.length) }, () => event);
      written.push(...(await recordEvents(em, "deals.watch.matched", WatchMatchedSchema, events)));
    }
    return written;
  });
  // Timed from the commit: the relay sees nothing before it. Profiled from there too: the recording is not the relay's.
  const started = performance.now();
  const profile = profiling() ? await startProfile() : undefined;
  const committed = new Map(ids.map((id) => [id, started]));
  const drainBy = performance.now() + 120_000;
  // The whole check only once as many have arrived: every 20 ms over 20,000 keys it took 9% of the window's profile.
  while (!(arrivals.first.size >= committed.size && arrivals.all(committed)) && performance.now() < drainBy)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const hot = await profile?.();
  subscription.unsubscribe();
  const stream = await countInStream(
    nc,
    benchEvents.stream("deals"),
    benchEvents.subject("deals.watch.matched"),
    after,
    ids,
    (m) => m.headers?.get("Nats-Msg-Id") ?? "",
  );
  const { notSeen } = arrivals.latencies(committed);
  const seconds = (last - started) / 1000;
  return {
    row: {
      label: "outbox relay, one burst → subscriber",
      requests: BURST - notSeen,
      rps: (BURST - notSeen) / seconds,
      p50: NaN,
      p99: NaN,
      failures: notSeen + stream.missing + stream.duplicated,
      cpuPerRequest: NaN,
      goal: { figure: "rps", atLeast: 10_000 },
      profile: hot,
    },
    notSeen,
    stream,
  };
}

/** The payload fields naming a deals.watch.matched event: one per watch and observation. */
interface WatchMatchedJson {
  watch_id: string;
  observation: { id: string };
}

function matchKey(event: WatchMatchedJson): string {
  return `${event.observation.id} ${event.watch_id}`;
}
