import { Migration } from "@mikro-orm/migrations";

/** The games schema: mod installs and their audit log. */
export class Migration20261215000000_games extends Migration {
  override up(): void {
    this.addSql(`create table mod_installs (
      id text primary key,
      mod_id text not null,
      name text not null,
      version text not null,
      game text not null,
      server text not null,
      status text not null,
      trust_tier text not null,
      requested text[] not null,
      granted text[] not null,
      manifest jsonb not null,
      content_pack jsonb not null,
      content_digest text not null,
      content_size int not null,
      revision int not null,
      status_reason text not null,
      installed_at timestamptz not null,
      updated_at timestamptz not null,
      constraint mod_installs_status_check check (status in ('disabled', 'enabled', 'revoked')),
      constraint mod_installs_trust_tier_check check (trust_tier in ('unreviewed', 'community', 'verified', 'official')),
      constraint mod_installs_granted_requested check (granted <@ requested)
    )`);
    this.addSql(
      `create unique index mod_installs_one_live on mod_installs (game, server, mod_id) where status <> 'revoked'`,
    );
    this.addSql(`create index mod_installs_by_scope on mod_installs (game, server, id)`);
    this.addSql(`create index mod_installs_by_mod on mod_installs (game, server, mod_id, version)`);
    this.addSql(`create table mod_audit (
      id text primary key,
      install_id text not null,
      revision int not null,
      action text not null,
      capability text not null,
      actor text not null,
      acting_for text not null,
      admitted_by text not null,
      staff_role text not null,
      reason text not null,
      status text not null,
      at timestamptz not null,
      constraint mod_audit_action_check
        check (action in ('installed', 'enabled', 'disabled', 'granted', 'ungranted', 'revoked')),
      constraint mod_audit_admitted_by_check check (admitted_by in ('capability', 'network_staff'))
    )`);
    this.addSql(`alter table mod_audit add constraint mod_audit_one_per_revision unique (install_id, revision)`);
  }
}
