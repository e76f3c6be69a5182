import { Migration } from "@mikro-orm/migrations";

/**
 * The test-mode provider's orders and the webhook deliveries it produced, in
 * billing's schema: every billing instance on the database knows them, and a
 * restart forgets none.
 */
export class Migration20261127000000_test_provider_orders extends Migration {
  override up(): void {
    this.addSql(`create table test_provider_orders (
      id text collate "C" primary key,
      request_id text not null unique,
      currency text not null,
      price bigint not null,
      state text not null default 'created' check (state in ('created', 'approved', 'declined', 'captured')),
      decline_reason text not null default '',
      created_at timestamptz not null,
      -- Auto mode: when the provider approves the order by itself next (null: nothing due), and how often it tried.
      approve_after timestamptz,
      approve_attempts integer not null default 0
    )`);
    // Ids sort by time as bytes: an order's deliveries read back oldest first. No foreign key:
    // the schema check compares constraints with billing's entities, which these tables have none of.
    this.addSql(`create table test_provider_deliveries (
      id text collate "C" primary key,
      order_id text collate "C" not null,
      type text not null,
      body text not null,
      signed_at timestamptz not null
    )`);
    this.addSql(`create index test_provider_deliveries_order on test_provider_deliveries (order_id, id)`);
    this.addSql(
      `create index test_provider_orders_due on test_provider_orders (approve_after) where approve_after is not null`,
    );
  }
}
