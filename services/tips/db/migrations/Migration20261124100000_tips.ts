import { Migration } from "@mikro-orm/migrations";

/** The tips schema (payments side): profiles, goals, checkouts, interactions and the moderation log. */
export class Migration20261124100000_tips extends Migration {
  override up(): void {
    this.addSql(`create table profiles (
      creator text primary key,
      page_enabled boolean not null,
      accepting boolean not null,
      settings jsonb not null,
      revision bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table goals (
      id text primary key,
      creator text not null,
      title text not null,
      description text not null default '',
      image_url text not null default '',
      position integer not null,
      public boolean not null,
      currency text not null,
      target bigint not null,
      revision bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      closed_at timestamptz,
      constraint goals_currency_check check (currency ~ '^[A-Z]{3}$'),
      constraint goals_target_check check (target > 0)
    )`);
    this.addSql(`create index goals_by_creator on goals (creator, position)`);
    this.addSql(`create table checkouts (
      id text primary key,
      supporter text not null,
      creator text not null,
      kind text not null,
      currency text not null,
      amount bigint not null,
      message text not null default '',
      goal_id text,
      media_url text not null default '',
      media_seconds integer not null default 0,
      method text not null,
      return_url text not null default '',
      payment_state text not null,
      idempotency_key text not null,
      request_hash text not null,
      intent_id text,
      checkout_url text not null default '',
      transaction_id text,
      decline_reason text not null default '',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      settled_at timestamptz,
      constraint checkouts_currency_check check (currency ~ '^[A-Z]{3}$'),
      constraint checkouts_kind_check check (kind in ('tip', 'paid_message', 'media_request')),
      constraint checkouts_method_check check (method in ('credit', 'intent')),
      constraint checkouts_payment_state_check check (payment_state in ('pending', 'settled', 'declined')),
      constraint checkouts_amount_check check (amount > 0)
    )`);
    this.addSql(`alter table checkouts add constraint checkouts_once_per_key unique (supporter, idempotency_key)`);
    this.addSql(`alter table checkouts add constraint checkouts_by_intent unique (intent_id)`);
    this.addSql(`create index checkouts_pending on checkouts (created_at) where payment_state = 'pending'`);
    this.addSql(`create table interactions (
      id text primary key,
      creator text not null,
      supporter text not null default '',
      kind text not null,
      currency text not null,
      amount bigint not null,
      message text not null default '',
      goal_id text,
      media_url text not null default '',
      media_seconds integer not null default 0,
      method text not null,
      payment_state text not null,
      delivery_state text not null,
      moderation text not null,
      intent_id text,
      transaction_id text,
      provider text,
      provider_ref text,
      supporter_name text not null default '',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      settled_at timestamptz,
      constraint interactions_currency_check check (currency ~ '^[A-Z]{3}$'),
      constraint interactions_kind_check check (kind in ('tip', 'paid_message', 'media_request', 'external')),
      constraint interactions_method_check check (method in ('credit', 'intent', 'external')),
      constraint interactions_payment_state_check check (payment_state in ('pending', 'settled', 'declined', 'external')),
      constraint interactions_delivery_state_check check (delivery_state in ('pending', 'queued', 'delivered', 'suppressed', 'canceled')),
      constraint interactions_moderation_check check (moderation in ('visible', 'hidden', 'held')),
      constraint interactions_external_check check ((kind = 'external') = (provider is not null and provider_ref is not null)),
      constraint interactions_amount_check check (amount > 0)
    )`);
    this.addSql(`alter table interactions add constraint interactions_external_once unique (provider, provider_ref)`);
    this.addSql(`create index interactions_by_creator on interactions (creator, id)`);
    this.addSql(`create index interactions_by_supporter on interactions (supporter, id)`);
    this.addSql(
      `create index interactions_by_goal on interactions (goal_id) where payment_state in ('settled', 'external')`,
    );
    this.addSql(`create table moderation_records (
      id text primary key,
      interaction_id text not null,
      creator text not null,
      action text not null,
      actor text not null,
      relayed_by text not null default '',
      reason text not null default '',
      created_at timestamptz not null,
      constraint moderation_records_action_check check (action in ('hide', 'restore', 'hold'))
    )`);
    this.addSql(`create index moderation_records_by_creator on moderation_records (creator, id)`);
  }
}
