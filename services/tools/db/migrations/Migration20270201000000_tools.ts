import { Migration } from "@mikro-orm/migrations";

/** The tools schema: jobs with their files, progress events and references, and the probes' abuse log. */
export class Migration20270201000000_tools extends Migration {
  override up(): void {
    this.addSql(`create table jobs (
      id text primary key,
      tool text not null,
      family text not null,
      owner text not null,
      state text not null,
      progress int not null default 0,
      input jsonb not null,
      output jsonb null,
      failure_code text not null default '',
      failure_detail text not null default '',
      attempt int not null default 0,
      lease_until timestamptz null,
      idempotency_key text null,
      request_hash text not null default '',
      retry_of text null,
      retried_by text null,
      created_at timestamptz not null,
      started_at timestamptz null,
      ended_at timestamptz null,
      expires_at timestamptz null,
      expired_at timestamptz null,
      constraint jobs_state_check check (state in ('queued', 'running', 'succeeded', 'failed', 'canceled')),
      constraint jobs_progress_check check (progress >= 0 and progress <= 100)
    )`);
    this.addSql(`create index jobs_queue on jobs (family, state, created_at)`);
    this.addSql(`create index jobs_by_owner on jobs (owner, created_at)`);
    this.addSql(`create index jobs_expiring on jobs (expires_at) where expires_at is not null`);
    this.addSql(`create unique index jobs_idempotency_unique on jobs (owner, idempotency_key)
      where idempotency_key is not null`);
    this.addSql(`create table job_files (
      job_id text not null,
      kind text not null,
      n int not null,
      name text not null,
      content_type text not null,
      size bigint not null,
      sha256 text not null,
      blob_key text not null,
      primary key (job_id, kind, n),
      constraint job_files_kind_check check (kind in ('input', 'result')),
      constraint job_files_size_check check (size >= 0)
    )`);
    this.addSql(`create table job_events (
      id bigserial primary key,
      job_id text not null,
      kind text not null,
      state text not null,
      progress int not null,
      message text not null default '',
      at timestamptz not null
    )`);
    this.addSql(`create index job_events_by_job on job_events (job_id, id)`);
    this.addSql(`create table job_references (
      job_id text not null,
      ref text not null,
      added_by text not null,
      added_at timestamptz not null,
      primary key (job_id, ref)
    )`);
    this.addSql(`create table probe_log (
      id bigserial primary key,
      tool text not null,
      caller_hash text not null,
      target_hash text not null,
      outcome text not null,
      at timestamptz not null
    )`);
    this.addSql(`create index probe_log_by_target on probe_log (target_hash, at)`);
  }
}
