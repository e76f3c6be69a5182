import type { EntityManager } from "@mikro-orm/postgresql";
import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { newId } from "../../kit/ids.js";
import { problem } from "../../kit/problem.js";
import { accountKey, balanceAfter, requireBalanced, SYSTEM_KINDS_SQL, type AccountKey, type Movement, type TxKind } from "../domain/ledger.js";

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

type Checked = { owner: string; kind: string; currency: string; balance: string; after: string; ok: boolean; frozen: boolean };

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
    await em.getConnection().execute(
      `insert into billing.accounts (owner, kind, currency, balance, updated_at)
       values ${posting.movements.map(() => "(?, ?, ?, 0, ?)").join(", ")} on conflict do nothing`,
      posting.movements.flatMap((m) => [m.owner, m.kind, m.currency, posting.at]),
      "run",
      em.getTransactionContext(),
    );
    checked = await write(em, posting, transactionId);
  }
  if (checked[0].frozen) throw economyFrozen();
  const balances = new Map<AccountKey, bigint>();
  for (const row of checked) {
    const movement = posting.movements.find((m) => accountKey(m) === accountKey(row))!;
    // Throws insufficient_funds for the short account when the statement wrote nothing.
    balances.set(accountKey(row), balanceAfter(movement, BigInt(row.balance)));
  }
  if (!checked[0].ok) throw new Error("the ledger statement refused a posting the rules accept");
  return { transactionId, balances };
}

function write(em: EntityManager, posting: Posting, transactionId: string): Promise<Checked[]> {
  const { movements, reference } = posting;
  return em.getConnection().execute<Checked[]>(
    `with v (owner, kind, currency, amount) as (values ${movements.map(() => "(?::text, ?::text, ?::text, ?::bigint)").join(", ")}),
     locked as (
       select a.owner, a.kind, a.currency, a.balance from billing.accounts a join v using (owner, kind, currency)
       order by a.owner collate "C", a.kind collate "C", a.currency collate "C"
       for update of a
     ),
     checked as (select l.*, l.balance + v.amount as after, v.amount from locked l join v using (owner, kind, currency)),
     verdict as (
       select (select frozen from billing.economy where id = 1) as frozen,
         (select count(*) from checked) = ? and not exists (select 1 from checked where after < 0 and kind not in (${SYSTEM_KINDS_SQL})) as fits
     ),
     ok as (select not frozen and fits as ok, frozen from verdict),
     balances as (
       update billing.accounts a set balance = c.after, updated_at = ?
       from checked c where (select ok from ok) and a.owner = c.owner and a.kind = c.kind and a.currency = c.currency
     ),
     transaction as (
       insert into billing.transactions (id, kind, reason, reference_service, reference_kind, reference_id, created_by, created_at)
       select ?, ?, ?, ?, ?, ?, ?, ? where (select ok from ok)
     ),
     entries as (
       insert into billing.entries (transaction_id, owner, kind, currency, amount, balance_after, created_at)
       select ?, c.owner, c.kind, c.currency, c.amount, c.after, ? from checked c where (select ok from ok)
     )
     select c.owner, c.kind, c.currency, c.balance, c.after, ok.ok, ok.frozen from checked c cross join ok`,
    [
      ...movements.flatMap((m) => [m.owner, m.kind, m.currency, m.amount.toString()]),
      movements.length,
      posting.at,
      transactionId, posting.kind, posting.reason ?? "", reference?.service ?? "", reference?.kind ?? "", reference?.id ?? "",
      posting.createdBy, posting.at,
      transactionId, posting.at,
    ],
    "all",
    em.getTransactionContext(),
  );
}

/** Refuses a write while the economy is frozen (for writes that post nothing, or before they call out). */
export async function requireThawed(em: EntityManager): Promise<void> {
  const [row] = await em.getConnection().execute<{ frozen: boolean }[]>(
    `select frozen from billing.economy where id = 1`,
    [],
    "all",
    em.getTransactionContext(),
  );
  if (row.frozen) throw economyFrozen();
}

export function economyFrozen() {
  return problem(409, "economy.frozen", "The economy is frozen: billing refuses writes until a ledger admin thaws it. Reads are served.");
}
