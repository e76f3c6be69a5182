import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { CurrencyBalanceSchema, type CurrencyBalance } from "../../../gen/pf/billing/v1/ledger_pb.js";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";

const FIELD_OF_KIND = {
  credit: "spendableCredit",
  payable: "creatorPayable",
  pending_payout: "pendingPayouts",
  import_hold: "importHeld",
} as const satisfies Record<string, keyof CurrencyBalance>;

/** A subject's balances, one entry per currency (narrowed to `currency` when given); inside the caller's transaction if any. */
export async function balancesOf(em: EntityManager, subject: string, currency?: string): Promise<CurrencyBalance[]> {
  const rows = await sql<BalanceRow>(
    em,
    `select kind, currency, balance from {accounts}
     where owner = ?${currency ? " and currency = ?" : ""} order by currency`,
    currency ? [subject, currency] : [subject],
  );
  return balancesOfRows(rows);
}

type BalanceRow = { kind: keyof typeof FIELD_OF_KIND; currency: string; balance: string };

const accountsOfOwner = new HotRead<BalanceRow, [string, string | null]>(
  "accounts.by_owner",
  `select kind, currency, balance from {accounts}
   where owner = $1 and ($2::text is null or currency = $2) order by currency`,
);

/** `balancesOf` outside any transaction, as a hot read (services/kit/db/reads.ts). */
export async function readBalances(ctx: ReadContext, subject: string, currency?: string): Promise<CurrencyBalance[]> {
  return balancesOfRows(await accountsOfOwner.run(ctx, subject, currency ?? null));
}

function balancesOfRows(rows: readonly BalanceRow[]): CurrencyBalance[] {
  const balances = new Map<string, CurrencyBalance>();
  for (const row of rows) {
    const balance = balances.get(row.currency) ?? create(CurrencyBalanceSchema, { currency: row.currency });
    balance[FIELD_OF_KIND[row.kind]] = BigInt(row.balance);
    balances.set(row.currency, balance);
  }
  return [...balances.values()];
}
