import { Migration } from "@mikro-orm/migrations";

/** The sources schema: sources, items and their revisions, fetch runs, the change counter and host turns. */
export class Migration20261203000200_sources extends Migration {
  override up(): void {
    this.addSql(`create table sources (
      key text primary key,
      kind text not null check (kind in ('manual', 'rss', 'atom', 'json_feed', 'html_page', 'json_api')),
      url text,
      host text,
      title text not null,
      enabled boolean not null,
      terms_note text not null,
      robots_note text not null,
      credential_variable text,
      credential_scheme text check (credential_scheme in ('bearer', 'header', 'basic')),
      credential_header text,
      fetch_interval_seconds int not null,
      next_fetch_at timestamptz,
      etag text,
      last_modified text,
      last_success_at timestamptz,
      last_attempt_at timestamptz,
      consecutive_failures int not null,
      last_failure_class text,
      stale_reported boolean not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint sources_url_check check ((kind = 'manual') = (url is null))
    )`);
    this.addSql(`create index sources_due on sources (next_fetch_at) where enabled and kind <> 'manual'`);
    this.addSql(`create table items (
      id text primary key,
      source_key text not null,
      identity text not null,
      canonical_url text not null,
      external_id text not null,
      title text not null,
      summary text not null,
      content text not null,
      published_at timestamptz,
      identifiers jsonb not null,
      filing_type text not null,
      evidence_url text not null,
      revision int not null,
      change_order bigint not null,
      content_hash text not null,
      raw_body_hash text not null,
      parser_version text not null,
      retrieved_at timestamptz not null,
      terms text not null,
      removed_at timestamptz,
      removed_reason text,
      removed_by text,
      created_at timestamptz not null
    )`);
    this.addSql(`alter table items add constraint items_identity unique (source_key, identity)`);
    this.addSql(`alter table items add constraint items_change_order unique (change_order)`);
    this.addSql(`create table item_revisions (
      item_id text not null,
      revision int not null,
      canonical_url text not null,
      title text not null,
      summary text not null,
      content text not null,
      published_at timestamptz,
      identifiers jsonb not null,
      filing_type text not null,
      change_order bigint not null,
      content_hash text not null,
      raw_body_hash text not null,
      parser_version text not null,
      retrieved_at timestamptz not null,
      terms text not null,
      primary key (item_id, revision)
    )`);
    this.addSql(`create table fetch_runs (
      id text primary key,
      source_key text not null,
      state text not null check (state in ('queued', 'running', 'succeeded', 'not_modified', 'failed')),
      failure_class text,
      failure_detail text not null,
      trigger text not null check (trigger in ('schedule', 'manual')),
      queued_at timestamptz not null,
      started_at timestamptz,
      finished_at timestamptz,
      lease_until timestamptz,
      worker text,
      http_status int,
      bytes bigint not null,
      items_new int not null,
      items_revised int not null,
      items_unchanged int not null,
      items_skipped_removed int not null,
      constraint fetch_runs_failure_check check ((state = 'failed') = (failure_class is not null))
    )`);
    this.addSql(
      `create unique index fetch_runs_one_active on fetch_runs (source_key) where state in ('queued', 'running')`,
    );
    this.addSql(`create index fetch_runs_queue on fetch_runs (queued_at) where state = 'queued'`);
    this.addSql(`create index fetch_runs_by_time on fetch_runs (queued_at, id)`);
    this.addSql(`create index fetch_runs_by_source on fetch_runs (source_key, queued_at, id)`);
    this.addSql(`create table change_counter (
      id smallint primary key check (id = 1),
      value bigint not null
    )`);
    this.addSql(`insert into change_counter (id, value) values (1, 0)`);
    this.addSql(`create table host_turns (
      host text primary key,
      next_at timestamptz not null
    )`);
  }
}
