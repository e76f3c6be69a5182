import { Migration } from "@mikro-orm/migrations";

/** The restream schema: streams and their ingest keys, destinations, sessions, outputs and their logs, workers and their commands. */
export class Migration20270401000000_restream extends Migration {
  override up(): void {
    this.addSql(`create table streams (
      id text primary key,
      owner text not null,
      title text not null,
      settings jsonb not null,
      external_refs jsonb not null,
      archived_at timestamptz null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index streams_by_owner on streams (owner, id)`);
    this.addSql(`create table ingest_keys (
      id text primary key,
      stream_id text not null,
      key_hash text not null,
      hint text not null,
      created_at timestamptz not null,
      revoked_at timestamptz null,
      constraint ingest_keys_hash_unique unique (key_hash)
    )`);
    this.addSql(`create index ingest_keys_by_stream on ingest_keys (stream_id, created_at)`);
    this.addSql(`create table destinations (
      id text primary key,
      stream_id text not null,
      name text not null,
      url text not null,
      stream_key_sealed text not null default '',
      stream_key_hint text not null default '',
      passphrase_sealed text not null default '',
      enabled boolean not null,
      last_test jsonb null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz null
    )`);
    this.addSql(`create index destinations_by_stream on destinations (stream_id, id)`);
    this.addSql(`create table sessions (
      id text primary key,
      stream_id text not null,
      owner text not null,
      key_id text not null,
      worker_id text not null,
      generation int not null,
      state text not null,
      media jsonb null,
      recording text not null default 'off',
      playback jsonb null,
      remote_address text not null default '',
      started_at timestamptz not null,
      live_at timestamptz null,
      ended_at timestamptz null,
      end_reason text not null default '',
      constraint sessions_state_check check (state in ('starting', 'live', 'ended', 'interrupted'))
    )`);
    this.addSql(`create unique index sessions_one_open on sessions (stream_id) where state in ('starting', 'live')`);
    this.addSql(`create index sessions_by_stream on sessions (stream_id, id)`);
    this.addSql(`create index sessions_by_owner on sessions (owner, id)`);
    this.addSql(`create index sessions_by_worker on sessions (worker_id, state)`);
    this.addSql(`create table outputs (
      id text primary key,
      destination_id text not null,
      session_id text not null,
      stream_id text not null,
      state text not null,
      reason text not null default '',
      health jsonb null,
      restarts int not null default 0,
      worker_id text not null,
      generation int not null,
      started_at timestamptz not null,
      ended_at timestamptz null,
      constraint outputs_state_check check (state in ('starting', 'live', 'reconnecting', 'stopped', 'failed'))
    )`);
    this.addSql(`create unique index outputs_one_running on outputs (destination_id, session_id)
      where state in ('starting', 'live', 'reconnecting')`);
    this.addSql(`create index outputs_by_session on outputs (session_id, id)`);
    this.addSql(`create index outputs_by_destination on outputs (destination_id, id)`);
    this.addSql(`create table output_logs (
      seq bigserial primary key,
      output_id text not null,
      destination_id text not null,
      at timestamptz not null,
      text text not null
    )`);
    this.addSql(`create index output_logs_by_output on output_logs (output_id, seq)`);
    this.addSql(`create index output_logs_by_destination on output_logs (destination_id, seq)`);
    this.addSql(`create table workers (
      id text primary key,
      generation int not null,
      state text not null,
      ingest_url text not null,
      playback_base text not null,
      registered_at timestamptz not null,
      last_heartbeat_at timestamptz not null,
      constraint workers_state_check check (state in ('active', 'lost'))
    )`);
    this.addSql(`create table worker_commands (
      seq bigserial primary key,
      worker_id text not null,
      generation int not null,
      kind text not null,
      session_id text not null default '',
      output_id text not null default '',
      reason text not null default '',
      created_at timestamptz not null,
      constraint worker_commands_kind_check check (kind in ('end_session', 'start_output', 'stop_output'))
    )`);
    this.addSql(`create index worker_commands_pending on worker_commands (worker_id, generation, seq)`);
  }
}
