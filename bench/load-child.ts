import autocannon from "autocannon";
import { percentile, type ChildMessage, type LoadSettings, type LoadTarget } from "./load.js";

// Runs in its own process (see runLoad): warms up, then measures one target.
process.once("message", (message: { target: LoadTarget; settings: LoadSettings }) => void measure(message));

async function measure({ target, settings }: { target: LoadTarget; settings: LoadSettings }) {
  const base = { url: target.url, headers: target.headers, connections: settings.connections };
  await autocannon({ ...base, duration: settings.warmup });

  // autocannon's own percentiles are whole milliseconds; keep the exact times instead.
  const latencies: number[] = [];
  let non2xx = 0;
  process.send!({ kind: "measuring" } satisfies ChildMessage);
  const run = autocannon({ ...base, duration: settings.duration });
  run.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else non2xx++;
  });
  const result = await run;
  const sorted = Float64Array.from(latencies).sort();
  const message: ChildMessage = {
    kind: "figures",
    figures: {
      requests: sorted.length,
      rps: sorted.length / result.duration,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      failures: non2xx + result.errors + result.timeouts,
    },
  };
  process.send!(message, () => process.exit(0));
}
