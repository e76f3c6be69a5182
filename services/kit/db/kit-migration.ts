import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/** The kit's tables in every service schema: the transactional outbox, the consumers' inbox, job leases and idempotency keys. */
class KitTables extends Migration {
  override up(): void {
    // Ids sort by time as bytes: the C collation keeps that order whatever the database's default.
    this.addSql(`create table outbox (
      id text collate "C" primary key,
      subject text not null,
      schema_id text not null,
      payload text not null,
      created_at timestamptz not null default now(),
      sent_at timestamptz,
      attempts integer not null default 0,
      last_error text,
      retry_at timestamptz,
      failed_at timestamptz
    )`);
    this.addSql(`create index outbox_unsent on outbox (id) where sent_at is null and failed_at is null`);
    this.addSql(`create table inbox (
      consumer text not null,
      event_id text not null,
      handled_at timestamptz not null default now(),
      primary key (consumer, event_id)
    )`);
    this.addSql(`create table leases (
      name text primary key,
      holder text not null,
      until timestamptz not null
    )`);
    this.addSql(`create table idempotency_keys (
      scope text not null,
      key text not null,
      request_hash text not null,
      response bytea not null,
      created_at timestamptz not null default now(),
      primary key (scope, key)
    )`);
  }
}

export const kitMigration: MigrationObject = { name: "Migration00000000000000_kit", class: KitTables };
