import { connect } from "@nats-io/transport-node";
import { NetworkService } from "../gen/pf/network/v1/network_pb.js";
import { clientWithDefaults } from "../services/kit/rpc/clients.js";
import { percentile, type Benchmark, type LoadResult, type LoadSettings } from "./load.js";
import { benchEvents, startBenchPlatform } from "./platform.js";
import { Arrivals, countInStream, streamEnd } from "./event-count.js";
import { profiling, startProfile } from "./profile.js";

/** Writers pushing notifications at once (BENCH_EVENT_WRITERS): each commit wakes the relay. */
const WRITERS = Number(process.env.BENCH_EVENT_WRITERS || 20);

/**
 * Event latency from commit to a NATS subscriber, and the relay's throughput:
 * notifications pushed in process (no HTTP in the way) for the measured
 * duration, each timed from its RPC's answer (after the commit) to its arrival
 * at a plain NATS subscriber, matched by its title. Afterwards the stream is
 * read: every committed event must be there exactly once.
 */
export const eventDelivery: Benchmark = {
  name: "event delivery",
  async run(settings: LoadSettings) {
    const natsUrl = process.env.NATS_URL;
    if (!natsUrl) return { rows: [], notes: ["skipped: set NATS_URL to measure events on a real NATS server"] };
    const bench = await startBenchPlatform();
    const nc = await connect({ servers: natsUrl });
    try {
      const token = await bench.platform.mintToken({
        kind: "service",
        svc: "space",
        caps: ["network.notifications.push"],
      });
      const network = clientWithDefaults(NetworkService, bench.platform.transport, {
        headers: { authorization: `Bearer ${token}` },
      });
      const run = `b${Date.now().toString(36)}`;
      // Each event is known by its title, unique to the run; its commit time is the writer's answer.
      const committed = new Map<string, number>();
      const arrivals = new Arrivals();
      const subscription = nc.subscribe(benchEvents.subject("network.notification.pushed"), {
        callback: (_error, message) =>
          arrivals.arrived(message.json<{ notification: { title: string } }>().notification.title),
      });
      await nc.flush();
      const after = await streamEnd(nc, benchEvents.stream("network"));

      let sequence = 0;
      let stop = false;
      const profile = profiling() ? await startProfile() : undefined;
      const cpu = process.cpuUsage();
      const started = performance.now();
      const writer = async () => {
        while (!stop) {
          const title = `${run}-${sequence++}`;
          await network.pushNotification({ kind: "bench", recipients: ["usr_bench1"], title });
          committed.set(title, performance.now());
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);
      await new Promise((resolve) => setTimeout(resolve, settings.duration * 1000));
      stop = true;
      await Promise.all(writers);
      // Everything committed must arrive; wait for the relay to drain.
      const drainBy = performance.now() + 30_000;
      while (!arrivals.all(committed) && performance.now() < drainBy)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const elapsed = (performance.now() - started) / 1000;
      const { user, system } = process.cpuUsage(cpu);
      const hot = await profile?.();
      subscription.unsubscribe();
      const stream = await countInStream(
        nc,
        benchEvents.stream("network"),
        benchEvents.subject("network.notification.pushed"),
        after,
        committed.keys(),
        (m) => String(m.json<{ notification: { title: string } }>().notification.title),
      );

      const { sorted, early, notSeen } = arrivals.latencies(committed);
      const row: LoadResult = {
        label: `commit → subscriber (${bench.database})`,
        requests: committed.size,
        rps: committed.size / elapsed,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        failures: notSeen + stream.missing + stream.duplicated,
        cpuPerRequest: (user + system) / committed.size,
        goal: { figure: "p99", below: 25 },
        profile: hot,
      };
      return {
        rows: [row],
        notes: [
          `${committed.size} events from ${WRITERS} writers: ${row.rps.toFixed(0)} events/s committed and relayed, ` +
            `latency p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms (${early} arrived before their writer's answer: 0 ms); ` +
            `${notSeen} not seen by the subscriber (${arrivals.again} seen twice); ` +
            `the stream holds ${stream.missing} missing, ${stream.duplicated} more than once`,
        ],
      };
    } finally {
      await nc.close();
      await bench.stop();
    }
  },
};
