import autocannon from "autocannon";
import { percentile, type ChildMessage, type LoadSettings, type LoadTarget } from "./load.js";

// Runs in its own process (see runLoad): warms up, then measures one target.
process.once("message", (message: { target: LoadTarget; settings: LoadSettings }) => void measure(message));

async function measure({ target, settings }: { target: LoadTarget; settings: LoadSettings }) {
  const base = {
    url: target.url,
    headers: target.headers,
    method: target.method ?? "GET",
    body: target.body,
    connections: target.connections ?? settings.connections,
    ...(target.paths && { requests: target.paths.map((path) => ({ path })) }),
  };
  const expected = (status: number) => (target.status ? status === target.status : status >= 200 && status < 300);
  await autocannon({ ...base, duration: settings.warmup });

  // autocannon's own percentiles are whole milliseconds; keep the exact times instead.
  const latencies: number[] = [];
  let unexpected = 0;
  process.send!({ kind: "measuring" } satisfies ChildMessage);
  const run = autocannon({ ...base, duration: settings.duration });
  run.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (expected(status)) latencies.push(ms);
    else unexpected++;
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
      failures: unexpected + (target.hangsUp ? 0 : result.errors) + result.timeouts,
    },
  };
  process.send!(message, () => process.exit(0));
}
