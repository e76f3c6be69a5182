import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BillingAdminService } from "../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../gen/pf/billing/v1/billing_pb.js";
import { AccountKind } from "../gen/pf/billing/v1/ledger_pb.js";
import { clientWithDefaults } from "../services/kit/rpc/clients.js";
import { adminQuery, withDatabase } from "../services/kit/db/server.js";
import { sql } from "../services/kit/db/sql.js";
import { percentile, type Benchmark, type LoadResult, type LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";
import { profiling, startProfile } from "./profile.js";

const run = promisify(execFile);

/** Concurrent clients, the same for the ledger and for pgbench (BENCH_LEDGER_CLIENTS). */
const CLIENTS = Number(process.env.BENCH_LEDGER_CLIENTS || 16);
/** Alternating rounds of each: a machine that slows down for a while slows both. */
const ROUNDS = 3;
const PAYERS = 1000;
/** Few creators receive every transfer: their payable accounts are the hot rows, as pgbench's one branch is. */
const CREATORS = 10;
const TPCB_DATABASE = "pf_bench_tpcb";

/**
 * Ledger transfers per second against real PostgreSQL, beside pgbench's
 * TPC-B-like script with the same number of clients, in alternating rounds of
 * the same run. Each transfer goes through the billing RPC (enforcement, the
 * idempotency key, the ledger's locked posting, the outbox event) on the
 * in-memory transport. Afterwards a reconciliation run must find the ledger
 * balanced: every break is counted.
 */
export const ledgerTransfers: Benchmark = {
  name: "ledger transfers",
  async run(settings: LoadSettings) {
    const server = process.env.DATABASE_URL;
    if (!server) return { rows: [], notes: ["skipped: set DATABASE_URL to measure the ledger on a real PostgreSQL"] };
    const tpcb = await pgbenchDatabase(server);
    const ledger = await ledgerPlatform();
    try {
      const round = Math.max(1, Math.round(settings.duration / ROUNDS));
      await tpcb.drive(settings.warmup);
      await ledger.drive(settings.warmup);
      ledger.measure();
      const profile = profiling() ? await startProfile() : undefined;
      let reference = { transactions: 0, seconds: 0 };
      for (let i = 0; i < ROUNDS; i++) {
        const done = await tpcb.drive(round);
        reference = { transactions: reference.transactions + done, seconds: reference.seconds + round };
        await ledger.drive(round);
      }
      const hot = await profile?.();
      const measured = ledger.figures();
      const breaks = await ledger.breaks();
      const perCommit = await ledger.transfersPerCommit();
      const referenceRow: LoadResult = {
        label: "pgbench TPC-B-like (scale 1)",
        requests: reference.transactions,
        rps: reference.transactions / reference.seconds,
        p50: NaN,
        p99: NaN,
        failures: 0,
        cpuPerRequest: NaN,
      };
      const ratio = measured.rps / referenceRow.rps;
      return {
        rows: [
          referenceRow,
          {
            ...measured,
            failures: breaks,
            goal: { figure: "ratio", of: referenceRow.label, atLeast: 1 },
            profile: hot,
          },
        ],
        notes: [
          `${CLIENTS} clients each, ${ROUNDS} alternating rounds: ledger ${measured.rps.toFixed(0)} transfers/s vs pgbench TPC-B ` +
            `${referenceRow.rps.toFixed(0)} tps: ratio ${ratio.toFixed(2)} (goal ≥ 1.0); ${ledger.refused()} refused for short credit, ` +
            `invariant breaks found by reconciliation: ${breaks}; ${perCommit.toFixed(1)} transfers per commit ` +
            `(PF_BILLING_BATCH=${process.env.PF_BILLING_BATCH ?? "default"})`,
        ],
      };
    } finally {
      await ledger.stop();
      await tpcb.stop();
    }
  },
};

async function pgbenchDatabase(server: string) {
  await adminQuery(server, `drop database if exists ${TPCB_DATABASE} with (force)`);
  await adminQuery(server, `create database ${TPCB_DATABASE}`);
  const url = withDatabase(server, TPCB_DATABASE);
  await run("pgbench", ["-i", "-q", "-s", "1", url]);
  return {
    /** Runs pgbench for `seconds`; answers the transactions it made. */
    async drive(seconds: number): Promise<number> {
      const { stdout } = await run("pgbench", ["-c", String(CLIENTS), "-j", "2", "-T", String(seconds), "-n", url]);
      return Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1]);
    },
    stop: () => adminQuery(server, `drop database if exists ${TPCB_DATABASE} with (force)`),
  };
}

async function ledgerPlatform() {
  const bench = await startBenchPlatform({ PF_SERVICES: "billing", PF_DB_POOL: String(CLIENTS) });
  const mint = (caps: string[]) => bench.platform.mintToken({ kind: "service", svc: "bench", caps });
  const headers = async (caps: string[]) => ({ headers: { authorization: `Bearer ${await mint(caps)}` } });
  const billing = clientWithDefaults(
    BillingService,
    bench.platform.transport,
    await headers(["billing.transfer.create"]),
  );
  const admin = clientWithDefaults(
    BillingAdminService,
    bench.platform.transport,
    await headers(["billing.ledger.admin"]),
  );
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
  let seconds = 0;
  let cpu = 0;
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
  return {
    measure: () => (measuring = true),
    async drive(duration: number) {
      const started = performance.now();
      const usage = process.cpuUsage();
      const until = started + duration * 1000;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (performance.now() < until) await transfer();
        }),
      );
      if (!measuring) return;
      seconds += (performance.now() - started) / 1000;
      const { user, system } = process.cpuUsage(usage);
      cpu += user + system;
    },
    figures(): LoadResult {
      const sorted = Float64Array.from(latencies).sort();
      return {
        label: "billing CreateTransfer (in-memory transport)",
        requests: latencies.length,
        rps: latencies.length / seconds,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        failures: 0,
        cpuPerRequest: cpu / latencies.length,
      };
    },
    refused: () => refused,
    async breaks(): Promise<number> {
      const report = await admin.runReconciliation({});
      return report.result.case === "reconciliation" ? report.result.value.imbalances.length : -1;
    },
    /** How many transfers one database transaction posted, on average (rows written together share their xmin). */
    async transfersPerCommit(): Promise<number> {
      const [row] = await sql<{ transfers: string; commits: string }>(
        bench.platform.contexts.get("billing")!.orm.em.fork(),
        `select count(*) as transfers, count(distinct xmin::text) as commits from {transactions} where kind = 'transfer'`,
      );
      return Number(row.transfers) / Number(row.commits);
    },
    stop: () => bench.stop(),
  };
}
