import { Migration } from "@mikro-orm/migrations";

/** The codes schema: releases with their states, and the apps' trust tiers. */
export class Migration20261215000000_codes extends Migration {
  override up(): void {
    this.addSql(`create table releases (
      id text primary key,
      app text not null,
      kind text not null check (kind in ('app', 'mod')),
      version text not null,
      version_key text not null,
      compatibility text not null,
      manifest jsonb not null,
      status text not null check (status in ('draft', 'published', 'deprecated', 'revoked')),
      deprecation_reason text,
      replacement text,
      revocation_reason text,
      created_at timestamptz not null,
      published_at timestamptz,
      deprecated_at timestamptz,
      revoked_at timestamptz
    )`);
    this.addSql(`alter table releases add constraint releases_version_per_app unique (app, version_key)`);
    this.addSql(`create index releases_by_app on releases (app, id)`);
    this.addSql(`create table app_trust (
      app text primary key,
      tier text not null check (tier in ('unreviewed', 'reviewed', 'verified', 'flagged')),
      note text not null,
      set_by text not null,
      updated_at timestamptz not null
    )`);
  }
}
