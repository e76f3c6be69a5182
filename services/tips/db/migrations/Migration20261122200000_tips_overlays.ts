import { Migration } from "@mikro-orm/migrations";

/** The overlay half of tips: overlay configs, overlay tokens (hashed), and the alert and goal views streams start from. */
export class Migration20261122200000_tips_overlays extends Migration {
  override up(): void {
    this.addSql(`create table overlay_configs (
      id text primary key,
      creator text not null,
      kind text not null,
      name text not null,
      settings jsonb not null,
      revision bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint overlay_configs_kind_check check (kind in ('alerts', 'goals'))
    )`);
    this.addSql(`create index overlay_configs_by_creator on overlay_configs (creator, id)`);
    this.addSql(`create table overlay_tokens (
      id text primary key,
      creator text not null,
      scope_alerts boolean not null,
      scope_goals boolean not null,
      label text not null,
      secret_hash text not null,
      secret_hint text not null,
      created_at timestamptz not null,
      revoked_at timestamptz null,
      constraint overlay_tokens_scope_check check (scope_alerts or scope_goals),
      constraint overlay_tokens_secret_hash_unique unique (secret_hash)
    )`);
    this.addSql(`create index overlay_tokens_by_creator on overlay_tokens (creator, id)`);
    this.addSql(`create table overlay_alerts (
      interaction_id text primary key,
      creator text not null,
      event_id text not null,
      alert jsonb not null,
      hidden boolean not null,
      shown_at timestamptz not null
    )`);
    this.addSql(`create index overlay_alerts_by_creator on overlay_alerts (creator, event_id)`);
    this.addSql(`create table overlay_goals (
      goal_id text primary key,
      creator text not null,
      goal jsonb not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index overlay_goals_by_creator on overlay_goals (creator)`);
  }
}
