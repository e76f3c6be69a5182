import { Migration } from "@mikro-orm/migrations";

export const IMMUTABLE = "raise exception 'plan versions are immutable' using errcode = '23514';";

/**
 * The membership schema: plans, their immutable versions and publications
 * (with perk snapshots), perks, memberships, the projection of billing
 * entitlements and resource policies.
 */
export class Migration20261124000000_vip extends Migration {
  override up(): void {
    this.addSql(`create table plans (
      id text primary key,
      owner text not null,
      status text not null,
      current_version int,
      draft_version int,
      latest_version int not null,
      revision bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      published_at timestamptz,
      archived_at timestamptz,
      constraint plans_status_check check (status in ('draft', 'published', 'archived'))
    )`);
    this.addSql(`create index plans_by_owner on plans (owner, id)`);
    this.addSql(`create table plan_versions (
      plan_id text not null,
      version int not null,
      name text not null,
      description text not null,
      tier text not null,
      perk_ids jsonb not null,
      created_by text not null,
      created_at timestamptz not null,
      primary key (plan_id, version),
      constraint plan_versions_version_check check (version >= 1)
    )`);
    this.addSql(`create table plan_publications (
      plan_id text not null,
      version int not null,
      perks jsonb not null,
      published_by text not null,
      published_at timestamptz not null,
      primary key (plan_id, version)
    )`);
    // Function names follow MikroORM's {table}_{trigger}_fn, so the entities declare these triggers.
    for (const table of ["plan_versions", "plan_publications"]) {
      this.addSql(
        `create function ${table}_${table}_immutable_fn() returns trigger as $$ begin ${IMMUTABLE} end; $$ language plpgsql`,
      );
      this.addSql(
        `create trigger ${table}_immutable before update or delete on ${table} for each row execute function ${table}_${table}_immutable_fn()`,
      );
    }
    this.addSql(`create table perks (
      id text primary key,
      owner text not null,
      kind text not null,
      name text not null,
      description text not null,
      product_bindings jsonb not null,
      status text not null,
      revision bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      retired_at timestamptz,
      constraint perks_kind_check check (kind in ('badge', 'emote', 'gated_content', 'room', 'role')),
      constraint perks_status_check check (status in ('active', 'retired'))
    )`);
    this.addSql(`create index perks_by_owner on perks (owner, id)`);
    this.addSql(`create table memberships (
      id text primary key,
      member text not null,
      creator text not null,
      plan_id text not null,
      plan_version int not null,
      preferences jsonb not null,
      paid_via text not null,
      intent_id text,
      subscription_id text,
      created_at timestamptz not null,
      constraint memberships_paid_via_check check (paid_via in ('intent', 'credit'))
    )`);
    this.addSql(`create index memberships_by_member on memberships (member, id)`);
    this.addSql(`create index memberships_by_creator on memberships (creator, id)`);
    this.addSql(`create table entitlements (
      subject text not null,
      streamer text not null,
      subscription_id text not null,
      plan_id text not null,
      plan_version int not null,
      status text not null,
      valid_until timestamptz,
      observed_at timestamptz not null,
      refreshed_at timestamptz not null,
      primary key (subject, streamer),
      constraint entitlements_status_check check (status in ('active', 'canceled', 'ended', 'none'))
    )`);
    this.addSql(`create index entitlements_by_streamer on entitlements (streamer, valid_until)`);
    this.addSql(`create table policies (
      id text primary key,
      creator text not null,
      resource_service text not null,
      resource_kind text not null,
      resource_id text not null,
      rule text not null,
      plan_id text,
      perk_id text,
      always_check_billing boolean not null,
      set_by text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint policies_rule_check check (rule in ('any_member', 'plan_member', 'perk_holder'))
    )`);
    this.addSql(
      `alter table policies add constraint policies_one_per_resource unique (resource_service, resource_kind, resource_id)`,
    );
    this.addSql(`create index policies_by_creator on policies (creator, id)`);
  }
}
