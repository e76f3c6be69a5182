import { runLoad, type Benchmark, type LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";

/** Keys in each abusive body: about 1 MB of JSON, under the body limit. */
const KEYS = 70_000;
const ABUSERS = 50;
const GOAL_P99_MS = 50;

/**
 * `/healthz` latency on one connection while 50 anonymous connections send
 * ~1 MB JSON bodies of 70,000 keys to a route that needs a token, against the
 * same `/healthz` on a quiet platform. The bodies are refused 401 before they
 * are read (the connection closes with the answer): the goal is a p99 under 50 ms.
 */
export const healthUnderAbuse: Benchmark = {
  name: "health under abuse",
  async run(settings: LoadSettings) {
    const bench = await startBenchPlatform();
    try {
      const health = { url: `${bench.gatewayUrl}/healthz`, connections: 1 };
      const quiet = await runLoad("/healthz, quiet", health, settings);
      const body = JSON.stringify(Object.fromEntries(Array.from({ length: KEYS }, (_, i) => [`k${i}`, i])));
      const abusive = {
        url: `${bench.gatewayUrl}/tips/api/v1/goals`,
        method: "POST" as const,
        headers: { "content-type": "application/json" },
        body,
        status: 401,
        hangsUp: true,
        connections: ABUSERS,
      };
      const [abuse, measured] = await Promise.all([
        runLoad(`${ABUSERS} anonymous ${(body.length / 1e6).toFixed(1)} MB bodies`, abusive, settings),
        runLoad("/healthz, under abuse", health, settings),
      ]);
      const met = measured.p99 < GOAL_P99_MS;
      return {
        rows: [quiet, abuse, measured],
        notes: [
          `/healthz p99 ${measured.p99.toFixed(2)} ms under abuse, ${quiet.p99.toFixed(2)} ms quiet (goal p99 < ${GOAL_P99_MS} ms): goal ${met ? "met" : "NOT met"}`,
        ],
      };
    } finally {
      await bench.stop();
    }
  },
};
