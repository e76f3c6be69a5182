import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { ReconciliationRow, SYSTEM_KINDS_SQL } from "./entities.js";
import type { Check, Checked, Finding } from "../domain/reconciliation.js";

/**
 * The checks of a reconciliation, one query each over the whole ledger, each
 * answering (currency, ref, expected, actual, detail) per imbalance found.
 * They cover what billing holds: its ledger, its intents and provider events,
 * its cashouts. External tips never reach billing (the payer pays the creator
 * elsewhere), so they are never billing liabilities and nothing here looks for them.
 */
const CHECKS: Record<Check, string> = {
  // Debits equal credits in every transaction (the insert trigger enforces it; this finds what got past it).
  unbalanced_transaction: `
    select currency, transaction_id as ref, 0 as expected, sum(amount) as actual,
      format('The entries of transaction %s sum to %s %s, not 0.', transaction_id, sum(amount), currency) as detail
    from {entries}
    group by transaction_id, currency
    having sum(amount) <> 0`,

  // Every balance is the sum of its account's entries; entries without an account count too.
  balance_mismatch: `
    select currency, owner as ref, coalesce(e.total, 0) as expected, coalesce(a.balance, 0) as actual,
      case when a.balance is null
        then format('Entries on the %s account of %s in %s sum to %s, but there is no such account.', kind, owner, currency, e.total)
        else format('The %s balance of %s is %s %s; its entries sum to %s.', kind, owner, a.balance, currency, coalesce(e.total, 0))
      end as detail
    from {accounts} a
    full join (
      select owner, kind, currency, sum(amount) as total from {entries} group by owner, kind, currency
    ) e
      using (owner, kind, currency)
    where a.balance is null or a.balance <> coalesce(e.total, 0)`,

  // Subject balances never go below zero (system accounts do: they are the other side of money entering or leaving).
  negative_balance: `
    select currency, owner as ref, 0 as expected, balance as actual,
      format('The %s balance of %s is %s %s, below zero.', kind, owner, balance, currency) as detail
    from {accounts}
    where kind not in (${SYSTEM_KINDS_SQL}) and balance < 0`,

  // Money is never created or lost: all balances of a currency, system accounts included, sum to zero.
  ledger_total: `
    select currency, currency as ref, 0 as expected, sum(balance) as actual,
      format('All %s balances sum to %s, not 0.', currency, sum(balance)) as detail
    from {accounts}
    group by currency
    having sum(balance) <> 0`,

  // A settled intent's purchase took exactly its price from the provider's clearing account.
  intent_unbooked: `
    select i.currency, i.id as ref, -i.price as expected, coalesce(c.amount, 0) as actual,
      case when c.amount is null
        then format('Settled intent %s has no purchase transaction booking %s %s on provider clearing.', i.id, i.price, i.currency)
        else format('The purchase of settled intent %s books %s %s on provider clearing, not %s.', i.id, c.amount, i.currency, -i.price)
      end as detail
    from {intents} i
    left join (
      select t.reference_id as intent_id, e.currency, sum(e.amount) as amount
      from {transactions} t
      join {entries} e on e.transaction_id = t.id and e.kind = 'provider_clearing'
      where t.kind = 'purchase' and t.reference_service = 'billing' and t.reference_kind = 'intent'
      group by t.reference_id, e.currency
    ) c on c.intent_id = i.id and c.currency = i.currency
    where i.status = 'settled' and coalesce(c.amount, 0) <> -i.price`,

  // Credit is bought only through a settled intent.
  purchase_without_intent: `
    select coalesce(e.currency, '') as currency, t.id as ref, 0 as expected, coalesce(sum(e.amount) filter (where e.amount > 0), 0) as actual,
      format('Purchase transaction %s is not referenced by a settled intent.', t.id) as detail
    from {transactions} t
    left join {entries} e on e.transaction_id = t.id
    where t.kind = 'purchase' and not exists (
      select 1 from {intents} i
      where i.status = 'settled' and t.reference_service = 'billing' and t.reference_kind = 'intent' and i.id = t.reference_id)
    group by t.id, e.currency`,

  // A payment the provider captured (and we applied) settled its intent.
  payment_unsettled: `
    select coalesce(i.currency, '') as currency, p.id as ref, coalesce(i.price, 0) as expected, 0 as actual,
      case when i.id is null
        then format('Provider event %s captured %s order %s, which no intent has.', p.id, p.provider, p.provider_order_id)
        else format('Provider event %s captured the payment of intent %s, which is %s, not settled.', p.id, i.id, i.status)
      end as detail
    from {provider_events} p
    left join {intents} i on i.provider = p.provider and i.provider_order_id = p.provider_order_id
    where p.type = 'payment.captured' and p.status = 'applied' and i.status is distinct from 'settled'`,

  // A creator's pending payouts are exactly their cashouts in escrow.
  escrow_mismatch: `
    select currency, owner as ref, coalesce(c.amount, 0) as expected, coalesce(a.balance, 0) as actual,
      format('The pending payouts of %s are %s %s; the cashouts in escrow sum to %s.', owner, coalesce(a.balance, 0), currency, coalesce(c.amount, 0)) as detail
    from (select owner, currency, balance from {accounts} where kind = 'pending_payout') a
    full join (
      select subject as owner, currency, sum(amount) as amount from {cashouts}
      where status = 'requested' group by subject, currency
    ) c
      using (owner, currency)
    where coalesce(a.balance, 0) <> coalesce(c.amount, 0)`,
};

/** Every check in one statement. */
const FINDINGS = Object.entries(CHECKS)
  .map(
    ([check, query]) => `select '${check}' as "check", currency, ref, expected::text, actual::text, detail
      from (${query}) as found`,
  )
  .join("\nunion all\n");

type FindingRow = { check: Check; currency: string; ref: string; expected: string; actual: string; detail: string };
type CountRow = { transactions: string; accounts: string; payments: string };

/**
 * Runs every check, first thing in the caller's transaction, which it sets to
 * see one snapshot (repeatable read), so the checks and counts agree while
 * postings go on.
 */
export async function runChecks(em: EntityManager): Promise<{ findings: Finding[]; checked: Checked }> {
  await sql(em, "set transaction isolation level repeatable read");
  const rows = await sql<FindingRow>(em, FINDINGS);
  const [counts] = await sql<CountRow>(
    em,
    `select (select count(*) from {transactions}) as transactions,
            (select count(*) from {accounts}) as accounts,
            (select count(*) from {intents})
              + (select count(*) from {provider_events}) as payments`,
  );
  return {
    findings: rows.map((row) => ({ ...row, expected: BigInt(row.expected), actual: BigInt(row.actual) })),
    checked: {
      transactions: BigInt(counts.transactions),
      accounts: BigInt(counts.accounts),
      payments: BigInt(counts.payments),
    },
  };
}

/** Stores a run's report for later reads (written with the transaction). */
export function recordReconciliation(em: EntityManager, run: RequiredEntityData<ReconciliationRow>): void {
  em.create(ReconciliationRow, run);
}

/** A stored reconciliation run, if any. */
export function reconciliationById(em: EntityManager, id: string): Promise<ReconciliationRow | null> {
  return em.findOne(ReconciliationRow, { id });
}
