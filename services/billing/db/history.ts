import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  LedgerEntrySchema,
  LedgerTransactionSchema,
  type LedgerTransaction,
} from "../../../gen/pf/billing/v1/ledger_pb.js";
import { sql } from "../../kit/db/sql.js";
import { accountKindToProto, transactionKindToProto } from "../domain/ledger.js";
import { money } from "../domain/money.js";

type TransactionRow = {
  id: string;
  kind: string;
  reason: string;
  reference_service: string;
  reference_kind: string;
  reference_id: string;
  created_by: string;
  created_at: Date;
};
type EntryRow = {
  transaction_id: string;
  owner: string;
  kind: string;
  currency: string;
  amount: string;
  balance_after: string;
};

/**
 * The ids of a page of a subject's transactions, newest first (ids sort by
 * time), `limit` of them plus one to tell whether more follow: whole
 * transactions, however many of the subject's entries each holds.
 */
export async function transactionIdsOf(
  em: EntityManager,
  query: { subject: string; currency?: string; before?: string; limit: number },
): Promise<string[]> {
  const { subject, currency, before, limit } = query;
  const rows = await sql<{ transaction_id: string }>(
    em,
    `select distinct transaction_id from {entries}
     where owner = ?${currency ? " and currency = ?" : ""}${before !== undefined ? " and transaction_id < ?" : ""}
     order by transaction_id desc limit ?`,
    [subject, ...(currency ? [currency] : []), ...(before !== undefined ? [before] : []), limit + 1],
  );
  return rows.map((row) => row.transaction_id);
}

/** Ledger transactions with all their entries, in the order of `ids`. */
export async function loadTransactions(em: EntityManager, ids: string[]): Promise<LedgerTransaction[]> {
  if (ids.length === 0) return [];
  const [transactions, entries] = await Promise.all([
    sql<TransactionRow>(em, `select * from {transactions} where id in (?)`, [ids]),
    sql<EntryRow>(
      em,
      `select transaction_id, owner, kind, currency, amount, balance_after from {entries}
       where transaction_id in (?) order by seq`,
      [ids],
    ),
  ]);
  const byId = new Map(transactions.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    return [
      create(LedgerTransactionSchema, {
        id: row.id,
        kind: transactionKindToProto(row.kind),
        entries: entries
          .filter((entry) => entry.transaction_id === id)
          .map((entry) =>
            create(LedgerEntrySchema, {
              owner: entry.owner,
              kind: accountKindToProto(entry.kind),
              amount: money(BigInt(entry.amount), entry.currency),
              balanceAfter: BigInt(entry.balance_after),
            }),
          ),
        reason: row.reason,
        reference: row.reference_service
          ? { service: row.reference_service, kind: row.reference_kind, id: row.reference_id }
          : undefined,
        createdBy: row.created_by,
        createdAt: timestampFromDate(new Date(row.created_at)),
      }),
    ];
  });
}
