import { Migration } from "@mikro-orm/migrations";

/** The run schema: jobs, their persisted stream events and stream tickets. */
export class Migration20261221000000_run extends Migration {
  override up(): void {
    this.addSql(`create table jobs (
      id text primary key,
      project_id text not null,
      submitted_by text not null,
      subject text not null,
      state text not null,
      frame jsonb not null,
      node_id text not null default '',
      robot_id text not null default '',
      submitted_at timestamptz not null,
      placed_at timestamptz null,
      received_at timestamptz null,
      started_at timestamptz null,
      ended_at timestamptz null,
      device_ended_at timestamptz null,
      exit jsonb null,
      usage_seconds int not null default 0,
      usage_final boolean not null default false,
      attempts int not null default 0,
      offered boolean not null default false,
      next_attempt_at timestamptz null,
      cancel_requested_at timestamptz null,
      bot_cancel_pending boolean not null default false,
      stdout text not null default '',
      stderr text not null default '',
      truncated boolean not null default false,
      stream_bytes int not null default 0,
      stream_cut boolean not null default false,
      last_seq int not null default 0,
      constraint jobs_state_check check (state in ('queued', 'placed', 'running', 'ended')),
      constraint jobs_usage_check check (usage_seconds >= 0)
    )`);
    this.addSql(`create index jobs_by_project on jobs (project_id, id)`);
    this.addSql(`create index jobs_queued on jobs (next_attempt_at) where state = 'queued'`);
    this.addSql(`create index jobs_unsettled on jobs (id) where not usage_final`);
    this.addSql(`create index jobs_cancels_pending on jobs (id) where bot_cancel_pending`);
    this.addSql(`create table job_stream_events (
      job_id text not null,
      seq int not null,
      at timestamptz not null,
      kind text not null,
      body jsonb not null,
      constraint job_stream_events_pkey primary key (job_id, seq),
      constraint job_stream_events_kind_check check (kind in ('state', 'output'))
    )`);
    this.addSql(`create table stream_tickets (
      hash text primary key,
      job_id text not null,
      minter text not null,
      expires_at timestamptz not null,
      used_at timestamptz null
    )`);
    this.addSql(`create index stream_tickets_expiry on stream_tickets (expires_at)`);
  }
}
