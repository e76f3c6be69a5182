import { Migration } from "@mikro-orm/migrations";

const SYSTEM_KINDS = "'provider_clearing', 'payouts', 'adjustments', 'imports'";
export const IMMUTABLE = "raise exception 'ledger rows are immutable' using errcode = '23514';";

/**
 * The billing schema: the ledger (accounts, transactions, entries), payment
 * intents and provider events, cashouts, subscriptions, the economy switch,
 * import holds and reconciliation runs.
 */
export class Migration20261122100000_billing extends Migration {
  override up(): void {
    // A subject's balances may never go below zero; system accounts are the other side of money entering or leaving.
    this.addSql(`create table accounts (
      owner text not null,
      kind text not null check (kind in ('credit', 'payable', 'pending_payout', 'import_hold', ${SYSTEM_KINDS})),
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      balance bigint not null,
      updated_at timestamptz not null,
      primary key (owner, kind, currency),
      constraint accounts_balance_check check (balance >= 0 or kind in (${SYSTEM_KINDS}))
    )`);
    this.addSql(`create table transactions (
      id text primary key,
      kind text not null check (kind in ('purchase', 'transfer', 'subscription', 'cashout_request', 'cashout_approval',
        'cashout_denial', 'recycle', 'adjustment', 'import_hold', 'import_release')),
      reason text not null default '',
      reference_service text not null default '',
      reference_kind text not null default '',
      reference_id text not null default '',
      created_by text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create table entries (
      seq bigserial primary key,
      transaction_id text not null constraint entries_transaction_id_foreign references transactions (id),
      owner text not null,
      kind text not null,
      currency text not null,
      amount bigint not null check (amount <> 0),
      balance_after bigint not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index entries_by_transaction on entries (transaction_id)`);
    this.addSql(`create index entries_by_owner on entries (owner, transaction_id)`);
    // Debits equal credits: the entries of one transaction are written by one statement, which must balance per currency.
    this.addSql(`create function entries_entries_balanced_fn() returns trigger as $$ begin
      if exists (select 1 from new_entries group by transaction_id, currency having sum(amount) <> 0) then
        raise exception 'a ledger transaction must balance per currency' using errcode = '23514';
      end if;
      return null; end; $$ language plpgsql`);
    this.addSql(`create trigger entries_balanced after insert on entries
      referencing new table as new_entries for each statement execute function entries_entries_balanced_fn()`);
    // Function names follow MikroORM's {table}_{trigger}_fn, so the entities declare these triggers.
    for (const table of ["entries", "transactions"]) {
      this.addSql(
        `create function ${table}_${table}_immutable_fn() returns trigger as $$ begin ${IMMUTABLE} end; $$ language plpgsql`,
      );
      this.addSql(
        `create trigger ${table}_immutable before update or delete on ${table} for each row execute function ${table}_${table}_immutable_fn()`,
      );
    }

    // The one write path of money (db/ledger.ts calls it): a function, so each connection plans its statement once.
    // It locks the accounts in a fixed order and, only if all exist, the economy is not frozen and no subject
    // balance goes below zero, updates them and writes the transaction with its entries.
    this.addSql(`create function post_movements(
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

    this.addSql(`create table economy (
      id smallint primary key check (id = 1),
      frozen boolean not null,
      reason text not null default '',
      changed_by text not null default '',
      changed_at timestamptz not null
    )`);
    this.addSql(`insert into economy (id, frozen, changed_at) values (1, false, now())`);

    this.addSql(`create table intents (
      id text primary key,
      subject text not null,
      status text not null check (status in ('requires_action', 'approved', 'settled', 'declined')),
      product text not null check (product in ('credit', 'channel_subscription')),
      pack text not null default '',
      streamer text not null default '',
      plan_id text not null default '',
      plan_version bigint not null,
      tier text not null default '',
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      price bigint not null check (price > 0),
      credit_granted bigint not null check (credit_granted >= 0),
      checkout text not null check (checkout in ('web', 'app')),
      provider text not null,
      provider_order_id text not null,
      checkout_url text not null default '',
      app_reference text not null default '',
      return_url text not null default '',
      reference_service text not null default '',
      reference_kind text not null default '',
      reference_id text not null default '',
      transaction_id text,
      subscription_id text,
      decline_reason text not null default '',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      settled_at timestamptz,
      constraint intents_settled_check check ((status = 'settled') = (transaction_id is not null))
    )`);
    this.addSql(`create unique index intents_by_order on intents (provider, provider_order_id)`);
    this.addSql(`create index intents_by_subject on intents (subject, id)`);

    this.addSql(`create table provider_events (
      id text primary key,
      seq bigserial,
      provider text not null,
      provider_event_id text not null,
      type text not null,
      provider_order_id text not null default '',
      payload text not null,
      status text not null check (status in ('pending', 'held', 'applied', 'ignored', 'failed')),
      deliveries integer not null default 1,
      detail text not null default '',
      received_at timestamptz not null,
      applied_at timestamptz
    )`);
    this.addSql(`create unique index provider_events_once on provider_events (provider, provider_event_id)`);
    this.addSql(`create unique index provider_events_by_seq on provider_events (seq)`);

    this.addSql(`create table cashouts (
      id text primary key,
      subject text not null,
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      amount bigint not null check (amount > 0),
      status text not null check (status in ('requested', 'approved', 'denied')),
      escrow_until timestamptz not null,
      payout_reference text not null default '',
      reason text not null default '',
      decided_by text not null default '',
      request_transaction_id text not null,
      decision_transaction_id text,
      created_at timestamptz not null,
      decided_at timestamptz,
      constraint cashouts_approval_check check (status <> 'approved' or payout_reference <> '')
    )`);
    this.addSql(`create index cashouts_by_subject on cashouts (subject, id)`);
    this.addSql(`create index cashouts_by_status on cashouts (status, id)`);

    this.addSql(`create table subscriptions (
      id text primary key,
      subject text not null,
      streamer text not null,
      plan_id text not null,
      plan_version bigint not null,
      tier text not null,
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      price bigint not null check (price > 0),
      status text not null check (status in ('active', 'canceled', 'ended')),
      paid_via text not null check (paid_via in ('credit', 'intent')),
      valid_until timestamptz not null,
      started_at timestamptz not null,
      ended_at timestamptz,
      periods integer not null default 1,
      updated_at timestamptz not null
    )`);
    // One current subscription per subscriber and channel; ended ones stay as history.
    this.addSql(
      `create unique index subscriptions_one_current on subscriptions (subject, streamer) where status <> 'ended'`,
    );
    this.addSql(`create index subscriptions_due on subscriptions (valid_until) where status <> 'ended'`);
    this.addSql(`create index subscriptions_by_streamer on subscriptions (streamer, id)`);

    this.addSql(`create table import_holds (
      id text primary key,
      subject text not null,
      release_to text not null check (release_to in ('credit', 'payable')),
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      amount bigint not null check (amount > 0),
      source_ref text not null default '',
      reason text not null,
      status text not null check (status in ('held', 'released')),
      hold_transaction_id text not null,
      release_transaction_id text,
      created_at timestamptz not null,
      released_at timestamptz,
      released_by text not null default ''
    )`);

    this.addSql(`create table reconciliations (
      id text primary key,
      ran_at timestamptz not null,
      ran_by text not null,
      balanced boolean not null,
      report jsonb not null
    )`);
  }
}
