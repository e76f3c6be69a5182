import { Migration } from "@mikro-orm/migrations";

/** The network schema: subjects, legacy ids, staff, blocks, the coin ledger, module records, notifications, settings. */
export class Migration20261122000000_network extends Migration {
  override up(): void {
    this.addSql(`create table subjects (
      id text primary key check (id ~ '^(usr|gst)_[0-9a-z]+$'),
      display_name text not null default '',
      handle text not null default '',
      avatar_url text not null default '',
      updated_at timestamptz not null
    )`);
    this.addSql(`create table legacy_ids (
      service text not null,
      local_id text not null,
      subject text not null,
      created_at timestamptz not null,
      primary key (service, local_id)
    )`);
    this.addSql(`create table staff (
      subject text primary key,
      role text not null check (role in ('owner', 'admin', 'global_moderator')),
      capabilities text[] not null default '{}',
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index staff_one_owner on staff (role) where role = 'owner'`);
    this.addSql(`create table blocks (
      blocker text not null,
      blocked text not null,
      created_at timestamptz not null,
      primary key (blocker, blocked)
    )`);
    this.addSql(`create index blocks_by_blocked on blocks (blocked, blocker)`);
    this.addSql(`create table coin_accounts (
      app_id text not null,
      subject text not null,
      balance bigint not null check (balance >= 0),
      updated_at timestamptz not null,
      primary key (app_id, subject)
    )`);
    this.addSql(`create table coin_entries (
      id text primary key,
      app_id text not null,
      subject text not null,
      delta bigint not null check (delta <> 0),
      balance_after bigint not null check (balance_after >= 0),
      reason text not null,
      transfer_id text,
      created_at timestamptz not null
    )`);
    this.addSql(`create index coin_entries_by_account on coin_entries (app_id, subject, id)`);
    this.addSql(`create table module_records (
      namespace text not null,
      subject text not null,
      revision bigint not null check (revision >= 1),
      record jsonb not null,
      written_by text not null,
      updated_at timestamptz not null,
      primary key (namespace, subject)
    )`);
    this.addSql(`create table notifications (
      id text primary key,
      recipient text not null,
      kind text not null,
      title text not null,
      body text not null,
      link text not null,
      actor text not null,
      payload jsonb not null,
      pushed_by text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index notifications_by_recipient on notifications (recipient, id)`);
    this.addSql(`create table settings (
      name text primary key,
      value text not null,
      updated_at timestamptz not null
    )`);
  }
}
