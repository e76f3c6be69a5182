import { cpus } from "node:os";
import { healthUnderAbuse } from "./abuse.js";
import { effectsUnderLoad } from "./effects.js";
import { eventDelivery } from "./events.js";
import { gatewayDatabaseRead, gatewayRead } from "./gateway-read.js";
import { hostServing } from "./host-serving.js";
import { jobDispatch } from "./jobs.js";
import { ledgerTransfers } from "./ledger.js";
import { mediaTransfer } from "./media.js";
import { publicReadsUnderAbuse } from "./public-reads.js";
import { searchQueries } from "./search.js";
import { startAndMemory } from "./start.js";
import { toolsInlineRuns } from "./tools.js";
import { aiRuns } from "./ai.js";
import { restreamPublish } from "./restream.js";
import { watchEvents } from "./watch-events.js";
import { formatTable, loadSettings, verdict, type Benchmark, type BenchRow } from "./load.js";
import { formatProfile } from "./profile.js";

// Every benchmark, in order; `npm run bench -- NAME…` runs only those named.
const benchmarks: Benchmark[] = [
  gatewayRead,
  gatewayDatabaseRead,
  healthUnderAbuse,
  publicReadsUnderAbuse,
  eventDelivery,
  effectsUnderLoad,
  ledgerTransfers,
  mediaTransfer,
  hostServing,
  searchQueries,
  watchEvents,
  jobDispatch,
  toolsInlineRuns,
  aiRuns,
  restreamPublish,
  startAndMemory,
];

const settings = loadSettings();
const wanted = process.argv.slice(2);
const selected = wanted.length === 0 ? benchmarks : benchmarks.filter((b) => wanted.includes(b.name));
if (selected.length === 0)
  throw new Error(`no benchmark named ${wanted.join(", ")}; known: ${benchmarks.map((b) => b.name).join(", ")}`);

// The figures depend on the Node that runs them: the production image's is .nvmrc's (Node 20 spent ~40% more CPU
// per job than Node 26 in `jobs`, bench/README.md).
console.log(
  `node ${process.version}, ${cpus().length} cores; ${settings.connections} connections, ${settings.warmup} s warm-up, ` +
    `${settings.duration} s measured per target`,
);
const rows: BenchRow[] = [];
const notes: string[] = [];
let failed = false;
for (const benchmark of selected) {
  console.log(`running ${benchmark.name}…`);
  try {
    const report = await benchmark.run(settings);
    rows.push(...report.rows.map((result) => ({ bench: benchmark.name, result })));
    notes.push(...report.notes.map((note) => `${benchmark.name}: ${note}`));
    // The figures are information; only answers that went wrong fail the run.
    failed ||= report.rows.some((r) => r.failures > 0);
  } catch (error) {
    console.error(`${benchmark.name} failed:`, error);
    failed = true;
  }
}
// With BENCH_PROFILE=1, what the time went to in each row that missed its goal.
const profiles = rows.flatMap((row) =>
  row.result.profile && verdict(row, rows).startsWith("not met")
    ? [formatProfile(`${row.bench}: ${row.result.label}`, row.result.profile)]
    : [],
);
console.log(`\n${formatTable(rows)}\n\n${[...notes, ...profiles].join("\n")}`);
if (failed) process.exitCode = 1;
