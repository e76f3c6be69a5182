import { Migration } from "@mikro-orm/migrations";

/** The host schema: projects and members, sites, deploys with their files and logs, blobs, custom domains. */
export class Migration20270110000000_host extends Migration {
  override up(): void {
    this.addSql(`create table projects (
      id text primary key,
      name text not null,
      created_by text not null,
      environment text not null,
      created_at timestamptz not null,
      quota_storage_bytes bigint not null,
      quota_deploy_files int not null,
      quota_deploy_bytes bigint not null,
      quota_file_bytes bigint not null,
      quota_sites int not null,
      taken_down_at timestamptz null,
      taken_down_by text not null default '',
      taken_down_reason text not null default '',
      constraint projects_environment_check check (environment in ('production', 'sandbox'))
    )`);
    this.addSql(`create table members (
      project_id text not null,
      principal text not null,
      role text not null,
      added_at timestamptz not null,
      primary key (project_id, principal),
      constraint members_role_check check (role in ('owner', 'deployer', 'viewer')),
      constraint members_app_not_owner_check check (role <> 'owner' or left(principal, 4) = 'usr_')
    )`);
    this.addSql(`create index members_by_principal on members (principal, project_id)`);
    this.addSql(`create table sites (
      id text primary key,
      project_id text not null,
      slug text not null,
      active_deploy_id text null,
      created_at timestamptz not null,
      taken_down_at timestamptz null,
      taken_down_by text not null default '',
      taken_down_reason text not null default '',
      constraint sites_slug_unique unique (slug)
    )`);
    this.addSql(`create index sites_by_project on sites (project_id, id)`);
    this.addSql(`create table deploys (
      id text primary key,
      site_id text not null,
      project_id text not null,
      state text not null,
      files int not null default 0,
      bytes bigint not null,
      digest text not null default '',
      created_by text not null,
      created_at timestamptz not null,
      validated_at timestamptz null,
      error text not null default '',
      constraint deploys_state_check check (state in ('validating', 'ready', 'failed', 'deleted'))
    )`);
    this.addSql(`create index deploys_by_site on deploys (site_id, id)`);
    this.addSql(`create index deploys_by_project on deploys (project_id)`);
    this.addSql(`create table deploy_files (
      deploy_id text not null,
      path text not null,
      digest text not null,
      size bigint not null,
      content_type text not null,
      encodings jsonb not null default '{}',
      primary key (deploy_id, path)
    )`);
    this.addSql(`create index deploy_files_by_digest on deploy_files (digest)`);
    this.addSql(`create table deploy_log (
      deploy_id text not null,
      seq int not null,
      level text not null,
      path text not null default '',
      rule text not null default '',
      message text not null,
      primary key (deploy_id, seq),
      constraint deploy_log_level_check check (level in ('info', 'error'))
    )`);
    this.addSql(`create table blobs (
      digest text primary key,
      size bigint not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create table domains (
      id text primary key,
      site_id text not null,
      project_id text not null,
      hostname text not null,
      token text not null,
      status text not null,
      created_at timestamptz not null,
      verified_at timestamptz null,
      checked_at timestamptz null,
      last_error text not null default '',
      missed_checks int not null default 0,
      constraint domains_site_hostname_unique unique (site_id, hostname),
      constraint domains_status_check check (status in ('pending', 'verified'))
    )`);
    this.addSql(`create index domains_by_site on domains (site_id, id)`);
    // One site per verified domain, platform-wide: no takeover of a domain another tenant verified.
    this.addSql(`create unique index domains_verified_hostname on domains (hostname) where status = 'verified'`);
  }
}
