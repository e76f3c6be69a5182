import { Migration } from "@mikro-orm/migrations";

const SYSTEM_KINDS = "'provider_clearing', 'payouts', 'adjustments', 'imports', 'revenue'";

/**
 * The network's own channel is sold like a streamer's: what it earns goes to
 * the platform's `revenue`, a new system kind. The kind check, the balance
 * check and post_movements (which tells system kinds apart) learn it.
 */
export class Migration20261125000000_network_revenue extends Migration {
  override up(): void {
    this.addSql(`alter table accounts drop constraint accounts_kind_check`);
    this.addSql(`alter table accounts add constraint accounts_kind_check
      check (kind in ('credit', 'payable', 'pending_payout', 'import_hold', ${SYSTEM_KINDS}))`);
    this.addSql(`alter table accounts drop constraint accounts_balance_check`);
    this.addSql(
      `alter table accounts add constraint accounts_balance_check check (balance >= 0 or kind in (${SYSTEM_KINDS}))`,
    );
    // As in Migration20261122100000_billing, with the new list of system kinds.
    this.addSql(`create or replace function post_movements(
        p_transaction text, p_kind text, p_reason text, p_reference_service text, p_reference_kind text, p_reference_id text,
        p_created_by text, p_at timestamptz, p_movements jsonb)
      returns table (owner text, kind text, currency text, balance bigint, after bigint, ok boolean, frozen boolean)
      language plpgsql as $$
      #variable_conflict use_column
      begin
        return query
        with v as (select * from jsonb_to_recordset(p_movements) as m (owner text, kind text, currency text, amount bigint)),
        locked as (
          select a.owner, a.kind, a.currency, a.balance from billing.accounts a join v using (owner, kind, currency)
          order by a.owner collate "C", a.kind collate "C", a.currency collate "C"
          for update of a
        ),
        checked as (select l.*, l.balance + v.amount as after, v.amount from locked l join v using (owner, kind, currency)),
        verdict as (
          select (select e.frozen from billing.economy e where e.id = 1) as frozen,
            (select count(*) from checked) = jsonb_array_length(p_movements)
              and not exists (select 1 from checked c where c.after < 0 and c.kind not in (${SYSTEM_KINDS})) as fits
        ),
        decided as (select not d.frozen and d.fits as ok, d.frozen from verdict d),
        balances as (
          update billing.accounts a set balance = c.after, updated_at = p_at
          from checked c where (select ok from decided) and a.owner = c.owner and a.kind = c.kind and a.currency = c.currency
        ),
        transaction as (
          insert into billing.transactions (id, kind, reason, reference_service, reference_kind, reference_id, created_by, created_at)
          select p_transaction, p_kind, p_reason, p_reference_service, p_reference_kind, p_reference_id, p_created_by, p_at
          where (select ok from decided)
        ),
        entries as (
          insert into billing.entries (transaction_id, owner, kind, currency, amount, balance_after, created_at)
          select p_transaction, c.owner, c.kind, c.currency, c.amount, c.after, p_at from checked c where (select ok from decided)
        )
        select c.owner, c.kind, c.currency, c.balance, c.after, d.ok, d.frozen from checked c cross join decided d;
      end $$`);
  }
}
