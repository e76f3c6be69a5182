import { runLoad, type Benchmark, type LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";

/** Keys in each abusive body: about 1 MB of JSON, under the body limit. */
const KEYS = 70_000;
const ABUSERS = 50;
const GOAL_P99_MS = 50;

/** Where the abusive bodies go, and what they are answered. */
const TARGETS = [
  { path: "/tips/api/v1/goals", status: 401, what: "a route that needs a token" },
  { path: "/tips/api/v1/nowhere", status: 404, what: "a path no route answers" },
];

/**
 * `/healthz` latency on one connection while 50 anonymous connections send
 * ~1 MB JSON bodies of 70,000 keys, in turn to a route that needs a token and
 * to a path no route answers, against the same `/healthz` on a quiet
 * platform. Both are answered before the body is read (the connection closes
 * with the answer): the goal is a p99 under 50 ms.
 */
export const healthUnderAbuse: Benchmark = {
  name: "health under abuse",
  async run(settings: LoadSettings) {
    const bench = await startBenchPlatform();
    try {
      const health = { url: `${bench.gatewayUrl}/healthz`, connections: 1 };
      const rows = [await runLoad("/healthz, quiet", health, settings)];
      const notes: string[] = [];
      const body = JSON.stringify(Object.fromEntries(Array.from({ length: KEYS }, (_, i) => [`k${i}`, i])));
      for (const target of TARGETS) {
        const abusive = {
          url: `${bench.gatewayUrl}${target.path}`,
          method: "POST" as const,
          headers: { "content-type": "application/json" },
          body,
          status: target.status,
          hangsUp: true,
          connections: ABUSERS,
        };
        const [abuse, measured] = await Promise.all([
          runLoad(`${ABUSERS} × ${(body.length / 1e6).toFixed(1)} MB to ${target.path}`, abusive, settings),
          runLoad(`/healthz, meanwhile`, health, settings),
        ]);
        rows.push(abuse, { ...measured, goal: { figure: "p99", below: GOAL_P99_MS } });
        const met = measured.p99 < GOAL_P99_MS;
        notes.push(
          `/healthz p99 ${measured.p99.toFixed(2)} ms while anonymous bodies go to ${target.what} (goal p99 < ${GOAL_P99_MS} ms): goal ${met ? "met" : "NOT met"}`,
        );
      }
      return { rows, notes };
    } finally {
      await bench.stop();
    }
  },
};
