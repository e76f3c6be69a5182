import type { EntityManager } from "@mikro-orm/postgresql";
import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { newId } from "../../kit/ids.js";
import { problem } from "../../kit/problem.js";
import { accountKey, balanceAfter, lockOrder, requireBalanced, type AccountKey, type Movement, type TxKind } from "../domain/ledger.js";

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

type Locked = { owner: string; kind: string; currency: string; balance: string; frozen: boolean };

/**
 * The one way money moves: inside the caller's transaction, locks the
 * posting's accounts in one fixed order (creating missing ones), refuses the
 * posting while the economy is frozen or when a subject's balance would go
 * below zero (the table's check refuses it too), updates the balances and
 * writes the transaction with its entries in one statement, which the
 * database refuses unless it balances.
 */
export async function post(em: EntityManager, posting: Posting): Promise<Posted> {
  requireBalanced(posting.movements);
  const connection = em.getConnection();
  const tx = em.getTransactionContext();
  const accounts = lockOrder(posting.movements);
  let locked = await lockAccounts(em, accounts);
  if (locked.length < accounts.length) {
    const found = new Set(locked.map(accountKey));
    const missing = accounts.filter((a) => !found.has(accountKey(a)));
    await connection.execute(
      `insert into billing.accounts (owner, kind, currency, balance, updated_at) values ${missing.map(() => "(?, ?, ?, 0, ?)").join(", ")}
       on conflict do nothing`,
      missing.flatMap((a) => [a.owner, a.kind, a.currency, posting.at]),
      "run",
      tx,
    );
    locked = await lockAccounts(em, accounts);
  }
  if (locked[0]?.frozen) throw economyFrozen();

  const current = new Map(locked.map((row) => [accountKey(row), BigInt(row.balance)]));
  const balances = new Map<AccountKey, bigint>();
  for (const movement of posting.movements) {
    const key = accountKey(movement);
    balances.set(key, balanceAfter(movement, current.get(key)!));
  }

  const rows = posting.movements.map((m) => [m.owner, m.kind, m.currency, balances.get(accountKey(m))!.toString()]);
  await connection.execute(
    `update billing.accounts as a set balance = v.balance::bigint, updated_at = ?
     from (values ${rows.map(() => "(?, ?, ?, ?)").join(", ")}) as v (owner, kind, currency, balance)
     where a.owner = v.owner and a.kind = v.kind and a.currency = v.currency`,
    [posting.at, ...rows.flat()],
    "run",
    tx,
  );
  const transactionId = newId("ltx");
  const reference = posting.reference;
  await connection.execute(
    `with t as (
       insert into billing.transactions (id, kind, reason, reference_service, reference_kind, reference_id, created_by, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?)
     )
     insert into billing.entries (transaction_id, owner, kind, currency, amount, balance_after, created_at)
     values ${posting.movements.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
    [
      transactionId, posting.kind, posting.reason ?? "", reference?.service ?? "", reference?.kind ?? "", reference?.id ?? "",
      posting.createdBy, posting.at,
      ...posting.movements.flatMap((m) => [
        transactionId, m.owner, m.kind, m.currency, m.amount.toString(), balances.get(accountKey(m))!.toString(), posting.at,
      ]),
    ],
    "run",
    tx,
  );
  return { transactionId, balances };
}

/** Locks the existing accounts among `accounts` in the fixed order, reading the economy switch in the same statement. */
function lockAccounts(em: EntityManager, accounts: Movement[]): Promise<Locked[]> {
  return em.getConnection().execute<Locked[]>(
    `select a.owner, a.kind, a.currency, a.balance, (select frozen from billing.economy where id = 1) as frozen
     from billing.accounts a
     where (a.owner, a.kind, a.currency) in (${accounts.map(() => "(?, ?, ?)").join(", ")})
     order by a.owner collate "C", a.kind collate "C", a.currency collate "C"
     for update of a`,
    accounts.flatMap((a) => [a.owner, a.kind, a.currency]),
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
