import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BillingAdminService } from "../gen/pf/billing/v1/admin_pb.js";
import { AccountKind, BillingService } from "../gen/pf/billing/v1/billing_pb.js";
import { clientWithDefaults } from "../services/kit/clients.js";
import { adminQuery, withDatabase } from "../services/kit/db/server.js";
import { percentile, type Benchmark, type LoadResult, type LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";

const run = promisify(execFile);

/** Concurrent clients, the same for the ledger and for pgbench (BENCH_LEDGER_CLIENTS). */
const CLIENTS = Number(process.env.BENCH_LEDGER_CLIENTS || 16);
const PAYERS = 1000;
/** Few creators receive every transfer: their payable accounts are the hot rows, as pgbench's one branch is. */
const CREATORS = 10;
const TPCB_DATABASE = "pf_bench_tpcb";

/**
 * Ledger transfers per second against real PostgreSQL, beside pgbench's
 * TPC-B-like script with the same number of clients in the same run. Each
 * transfer goes through the billing RPC (enforcement, idempotency key, the
 * ledger's locked posting, the outbox event) on the in-memory transport.
 * Afterwards a reconciliation run must find the ledger balanced.
 */
export const ledgerTransfers: Benchmark = {
  name: "ledger transfers",
  async run(settings: LoadSettings) {
    const server = process.env.DATABASE_URL;
    if (!server) return { rows: [], notes: ["skipped: set DATABASE_URL to measure the ledger on a real PostgreSQL"] };
    const reference = await pgbench(server, settings);
    const ledger = await transfers(settings);
    const ratio = ledger.row.rps / reference.rps;
    return {
      rows: [reference, ledger.row],
      notes: [
        `${CLIENTS} clients each: ledger ${ledger.row.rps.toFixed(0)} transfers/s vs pgbench TPC-B ${reference.rps.toFixed(0)} tps: ` +
          `ratio ${ratio.toFixed(2)} (goal ≥ 0.6); ${ledger.refused} refused for short credit, invariant breaks: ${ledger.breaks}`,
      ],
    };
  },
};

async function pgbench(server: string, settings: LoadSettings): Promise<LoadResult> {
  await adminQuery(server, `drop database if exists ${TPCB_DATABASE} with (force)`);
  await adminQuery(server, `create database ${TPCB_DATABASE}`);
  const url = withDatabase(server, TPCB_DATABASE);
  try {
    await run("pgbench", ["-i", "-q", "-s", "1", url]);
    await run("pgbench", ["-c", String(CLIENTS), "-j", "2", "-T", String(settings.warmup), "-n", url]);
    const { stdout } = await run("pgbench", ["-c", String(CLIENTS), "-j", "2", "-T", String(settings.duration), "-n", "-r", url]);
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1]);
    const latency = Number(/latency average = ([\d.]+) ms/.exec(stdout)?.[1]);
    const transactions = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1]);
    return { label: "pgbench TPC-B-like (scale 1)", requests: transactions, rps: tps, p50: latency, p99: NaN, failures: 0, cpuPerRequest: NaN };
  } finally {
    await adminQuery(server, `drop database if exists ${TPCB_DATABASE} with (force)`);
  }
}

async function transfers(settings: LoadSettings) {
  const bench = await startBenchPlatform({ PF_SERVICES: "billing", PF_DB_POOL: String(CLIENTS) });
  try {
    const mint = (caps: string[]) => bench.platform.mintToken({ kind: "service", svc: "bench", caps });
    const headers = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    const billing = clientWithDefaults(BillingService, bench.platform.transport, headers(await mint(["billing.transfer.create"])));
    const admin = clientWithDefaults(BillingAdminService, bench.platform.transport, headers(await mint(["billing.ledger.admin"])));
    const tag = Date.now().toString(36);
    const payers = Array.from({ length: PAYERS }, (_, i) => `usr_payer${i}x${tag}`);
    const creators = Array.from({ length: CREATORS }, (_, i) => `usr_creator${i}x${tag}`);
    for (const payer of payers) {
      await admin.postAdjustment({
        reason: "bench funding",
        idempotencyKey: `fund-${payer}`,
        lines: [
          { owner: payer, kind: AccountKind.CREDIT, amount: { minorUnits: 1_000_000n, currency: "USD" } },
          { owner: "", kind: AccountKind.ADJUSTMENTS, amount: { minorUnits: -1_000_000n, currency: "USD" } },
        ],
      });
    }

    let sequence = 0;
    let refused = 0;
    let measuring = false;
    const latencies: number[] = [];
    const transfer = async () => {
      const n = sequence++;
      const started = performance.now();
      try {
        await billing.createTransfer({
          fromSubject: payers[n % PAYERS],
          toSubject: creators[n % CREATORS],
          amount: { minorUnits: BigInt(1 + (n % 97)), currency: "USD" },
          idempotencyKey: `t-${n}`,
          reason: "bench",
        });
        if (measuring) latencies.push(performance.now() - started);
      } catch (error) {
        if ((error as { rawMessage?: string }).rawMessage?.includes("short")) refused++;
        else throw error;
      }
    };
    const drive = async (seconds: number) => {
      const until = performance.now() + seconds * 1000;
      await Promise.all(Array.from({ length: CLIENTS }, async () => {
        while (performance.now() < until) await transfer();
      }));
    };
    await drive(settings.warmup);
    measuring = true;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await drive(settings.duration);
    const elapsed = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(cpu);

    const report = await admin.runReconciliation({});
    const reconciliation = report.result.case === "reconciliation" ? report.result.value : undefined;
    const sorted = Float64Array.from(latencies).sort();
    const row: LoadResult = {
      label: `billing CreateTransfer (in-memory transport)`,
      requests: latencies.length,
      rps: latencies.length / elapsed,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      failures: 0,
      cpuPerRequest: (user + system) / latencies.length,
    };
    return { row, refused, breaks: reconciliation?.imbalances.length ?? -1 };
  } finally {
    await bench.stop();
  }
}
