import { Migration } from "@mikro-orm/migrations";

/** The bot schema: robots, operators, devices, the command audit and dispatched jobs. */
export class Migration20270101000000_bot extends Migration {
  override up(): void {
    this.addSql(`create table robots (
      id text primary key,
      owner text not null,
      name text not null,
      configuration jsonb not null,
      estop_latched boolean not null,
      estop_changed_at timestamptz null,
      estop_changed_by text not null,
      estop_acting_for text not null,
      pairing_code_hash text null,
      pairing_code_expires_at timestamptz null,
      turn_holder text not null,
      turn_until timestamptz null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz null,
      constraint robots_pairing_code unique (pairing_code_hash)
    )`);
    this.addSql(`create index robots_by_owner on robots (owner, id) where deleted_at is null`);
    this.addSql(`create table robot_operators (
      robot_id text not null,
      subject text not null,
      role text not null,
      commands text[] not null,
      added_at timestamptz not null,
      primary key (robot_id, subject),
      constraint robot_operators_role_check check (role in ('operator', 'queue', 'viewer'))
    )`);
    this.addSql(`create index robot_operators_by_subject on robot_operators (subject, robot_id)`);
    this.addSql(`create table devices (
      id text primary key,
      robot_id text not null,
      name text not null,
      status text not null,
      credential_hash text not null,
      publish_key_hash text not null,
      paired_at timestamptz not null,
      rotated_at timestamptz null,
      revoked_at timestamptz null,
      revoke_reason text not null,
      agent_version text not null,
      classes text[] not null,
      artifacts jsonb not null,
      caps jsonb null,
      link_id text null,
      link_instance text null,
      connected_at timestamptz null,
      last_seen_at timestamptz null,
      constraint devices_credential unique (credential_hash),
      constraint devices_status_check check (status in ('paired', 'revoked'))
    )`);
    this.addSql(`create index devices_by_robot on devices (robot_id, id)`);
    this.addSql(`create index devices_by_link on devices (link_id) where link_id is not null`);
    this.addSql(`create table robot_audit (
      id text primary key,
      robot_id text not null,
      action text not null,
      actor text not null,
      acting_for text not null,
      target text not null,
      detail text not null,
      refusal text not null,
      at timestamptz not null
    )`);
    this.addSql(`create index robot_audit_by_robot on robot_audit (robot_id, id)`);
    this.addSql(`create table dispatched_jobs (
      id text primary key,
      request_hash text not null,
      node_id text not null,
      robot_id text not null,
      project_id text not null,
      subject text not null,
      provider text not null,
      frame jsonb not null,
      state text not null,
      exit jsonb null,
      stdout text not null,
      stderr text not null,
      stdout_bytes int not null,
      stderr_bytes int not null,
      output_seq int not null,
      event_seq int not null,
      cancel_requested boolean not null,
      dispatched_at timestamptz not null,
      received_at timestamptz null,
      started_at timestamptz null,
      ended_at timestamptz null,
      lost_at timestamptz not null,
      constraint dispatched_jobs_state_check check (state in ('dispatched', 'received', 'running', 'ended'))
    )`);
    this.addSql(
      `create index dispatched_jobs_open_by_node on dispatched_jobs (node_id, dispatched_at) where state <> 'ended'`,
    );
    this.addSql(`create index dispatched_jobs_lost on dispatched_jobs (lost_at) where state <> 'ended'`);
  }
}
