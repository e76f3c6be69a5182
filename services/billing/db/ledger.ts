import type { EntityManager } from "@mikro-orm/postgresql";
import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { MAX_MINOR_UNITS } from "../../kit/handler/money.js";
import { problem } from "../../kit/handler/problem.js";
import {
  accountKey,
  balanceAfter,
  requireBalanced,
  type AccountKey,
  type Movement,
  type TxKind,
} from "../domain/ledger.js";

/** A balanced set of movements to write as one ledger transaction. */
export interface Posting {
  kind: TxKind;
  movements: Movement[];
  reason?: string;
  reference?: EntityRef;
  /** The principal causing it (`svc:tips`). */
  createdBy: string;
  at: Date;
}

/** The written transaction and every touched account's balance after it. */
export interface Posted {
  transactionId: string;
  balances: Map<AccountKey, bigint>;
}

type Checked = {
  owner: string;
  kind: string;
  currency: string;
  balance: string;
  after: string;
  ok: boolean;
  frozen: boolean;
};

/**
 * The one way money moves, inside the caller's transaction and in one
 * statement, so the locks of hot accounts are held for as short a time as
 * possible: it locks the posting's accounts in one fixed order, and only if
 * every account exists, the economy is not frozen and no subject's balance
 * would go below zero (the table's check refuses that too), updates the
 * balances and writes the transaction with its entries, which the database
 * refuses unless they balance. Missing accounts are created and the
 * statement run again; a refusal throws (409 economy.frozen or
 * insufficient_funds) and the caller's transaction rolls back.
 */
export async function post(em: EntityManager, posting: Posting): Promise<Posted> {
  requireBalanced(posting.movements);
  const transactionId = newId("ltx");
  let checked = await write(em, posting, transactionId);
  if (checked.length < posting.movements.length) {
    await sql(
      em,
      `insert into {accounts} (owner, kind, currency, balance, updated_at)
       values ${posting.movements.map(() => "(?, ?, ?, 0, ?)").join(", ")} on conflict do nothing`,
      posting.movements.flatMap((m) => [m.owner, m.kind, m.currency, posting.at]),
    );
    checked = await write(em, posting, transactionId);
  }
  return postedOf(posting, transactionId, checked);
}

/** What the ledger statement said of one posting: what it wrote, else the refusal it met (thrown). */
function postedOf(posting: Posting, transactionId: string, checked: Checked[]): Posted {
  if (checked[0]?.frozen) throw economyFrozen();
  const balances = new Map<AccountKey, bigint>();
  for (const row of checked) {
    const movement = posting.movements.find((m) => accountKey(m) === accountKey(row))!;
    // Throws insufficient_funds for the short account when the statement wrote nothing.
    balances.set(accountKey(row), balanceAfter(movement, BigInt(row.balance)));
  }
  if (!checked[0]?.ok) throw new Error("the ledger statement refused a posting the rules accept");
  return { transactionId, balances };
}

/**
 * Many postings with one statement, inside the caller's transaction (the
 * transfer batch, `transfer-batch.ts`): each is posted, or refused, exactly as
 * `post` would post it alone after the ones before it, and a refused posting
 * writes nothing while the others go on. Answers, in order, each posting's
 * `Posted` or the error `post` would have thrown for it.
 */
export async function postBatch(em: EntityManager, postings: Posting[]): Promise<(Posted | Error)[]> {
  const outcomes: (Posted | Error)[] = [];
  const written: { posting: Posting; transactionId: string; index: number }[] = [];
  postings.forEach((posting, index) => {
    try {
      requireBalanced(posting.movements);
      written.push({ posting, transactionId: newId("ltx"), index });
    } catch (error) {
      outcomes[index] = error as Error;
    }
  });
  if (written.length === 0) return outcomes;
  const body = written.map(({ posting, transactionId }) => ({
    id: transactionId,
    kind: posting.kind,
    reason: posting.reason ?? "",
    reference_service: posting.reference?.service ?? "",
    reference_kind: posting.reference?.kind ?? "",
    reference_id: posting.reference?.id ?? "",
    created_by: posting.createdBy,
    at: posting.at.toISOString(),
    movements: movementsOf(posting),
  }));
  const rows = await sql<Checked & { posting: number }>(em, `select * from {post_batch}(?::jsonb, ?)`, [
    JSON.stringify(body),
    MAX_MINOR_UNITS.toString(),
  ]);
  const rowsOf = new Map<number, Checked[]>();
  for (const row of rows) rowsOf.set(row.posting, [...(rowsOf.get(row.posting) ?? []), row]);
  written.forEach(({ posting, transactionId, index }, n) => {
    try {
      outcomes[index] = postedOf(posting, transactionId, rowsOf.get(n + 1) ?? []);
    } catch (error) {
      outcomes[index] = error as Error;
    }
  });
  return outcomes;
}

function movementsOf(posting: Posting) {
  return posting.movements.map((m) => ({
    owner: m.owner,
    kind: m.kind,
    currency: m.currency,
    amount: m.amount.toString(),
  }));
}

function write(em: EntityManager, posting: Posting, transactionId: string): Promise<Checked[]> {
  const { reference } = posting;
  return sql<Checked>(em, `select * from {post_movements}(?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)`, [
    transactionId,
    posting.kind,
    posting.reason ?? "",
    reference?.service ?? "",
    reference?.kind ?? "",
    reference?.id ?? "",
    posting.createdBy,
    posting.at,
    JSON.stringify(movementsOf(posting)),
  ]);
}

/** Refuses a write while the economy is frozen (for writes that post nothing, or before they call out). */
export async function requireThawed(em: EntityManager): Promise<void> {
  const [row] = await sql<{ frozen: boolean }>(em, `select frozen from {economy} where id = 1`);
  if (row.frozen) throw economyFrozen();
}

export function economyFrozen() {
  return problem(
    409,
    "economy.frozen",
    "The economy is frozen: billing refuses writes until a ledger admin thaws it. Reads are served.",
  );
}
