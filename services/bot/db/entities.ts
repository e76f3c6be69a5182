import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A robot: its owner, name, configuration, e-stop latch and at most one
 * unused pairing code (its hash only, with its expiry). A deleted robot's row
 * stays (deleted_at) so its audit keeps its subject; reads answer 404.
 */
export const RobotRow = defineEntity({
  name: "RobotRow",
  tableName: "robots",
  uniques: [{ name: "robots_pairing_code", properties: ["pairingCodeHash"] }],
  indexes: [{ name: "robots_by_owner", properties: ["owner", "id"], where: "deleted_at is null" }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    name: p.text(),
    configuration: p.json<Record<string, unknown>>(),
    estopLatched: p.boolean(),
    estopChangedAt: p.datetime().nullable(),
    estopChangedBy: p.text(),
    estopActingFor: p.text(),
    pairingCodeHash: p.text().nullable(),
    pairingCodeExpiresAt: p.datetime().nullable(),
    /** The `queue` operator whose turn it is, until turn_until ("" for none). */
    turnHolder: p.text(),
    turnUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});
export type RobotRow = InferEntity<typeof RobotRow>;

/** A person's role on a robot besides its owner, with their /control allowlist (empty: any command). */
export const OperatorRow = defineEntity({
  name: "OperatorRow",
  tableName: "robot_operators",
  indexes: [{ name: "robot_operators_by_subject", properties: ["subject", "robotId"] }],
  checks: [{ name: "robot_operators_role_check", expression: "role in ('operator', 'queue', 'viewer')" }],
  properties: {
    robotId: p.text().primary(),
    subject: p.text().primary(),
    role: p.text(),
    commands: p.array(),
    addedAt: p.datetime(),
  },
});
export type OperatorRow = InferEntity<typeof OperatorRow>;

/**
 * A device paired to a robot. Its credential and publish key are kept only as
 * SHA-256 hashes (never answered); presence is the link it holds (link_id on
 * the instance link_instance) and when it was last heard from.
 */
export const DeviceRow = defineEntity({
  name: "DeviceRow",
  tableName: "devices",
  uniques: [{ name: "devices_credential", properties: ["credentialHash"] }],
  indexes: [
    { name: "devices_by_robot", properties: ["robotId", "id"] },
    { name: "devices_by_link", properties: ["linkId"], where: "link_id is not null" },
  ],
  checks: [{ name: "devices_status_check", expression: "status in ('paired', 'revoked')" }],
  properties: {
    id: p.text().primary(),
    robotId: p.text(),
    name: p.text(),
    status: p.text(),
    credentialHash: p.text(),
    publishKeyHash: p.text(),
    pairedAt: p.datetime(),
    rotatedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    revokeReason: p.text(),
    agentVersion: p.text(),
    classes: p.array(),
    /** The artifacts and caps of its last hello, as proto JSON. */
    artifacts: p.json<unknown[]>(),
    caps: p.json<Record<string, unknown>>().nullable(),
    linkId: p.text().nullable(),
    linkInstance: p.text().nullable(),
    connectedAt: p.datetime().nullable(),
    lastSeenAt: p.datetime().nullable(),
  },
});
export type DeviceRow = InferEntity<typeof DeviceRow>;

/** One audited action on a robot (insert-only): manage actions, e-stop, dispatch, /control commands. */
export const AuditRow = defineEntity({
  name: "AuditRow",
  tableName: "robot_audit",
  indexes: [{ name: "robot_audit_by_robot", properties: ["robotId", "id"] }],
  properties: {
    id: p.text().primary(),
    robotId: p.text(),
    action: p.text(),
    actor: p.text(),
    actingFor: p.text(),
    target: p.text(),
    detail: p.text(),
    refusal: p.text(),
    at: p.datetime(),
  },
});
export type AuditRow = InferEntity<typeof AuditRow>;

/**
 * A dispatched job (platform.job@1), by run's job id: the frame as
 * dispatched (proto JSON) and the hash of the whole request (idempotency),
 * where it stands on its device, its exit, the first 64 KiB of each output
 * stream (and how many bytes of it came), the last device output seq applied and the last JobEvent seq
 * written. `lost_at` is when the backstop ends it `lost` unless its device
 * ends it first.
 */
export const JobRow = defineEntity({
  name: "JobRow",
  tableName: "dispatched_jobs",
  indexes: [
    { name: "dispatched_jobs_open_by_node", properties: ["nodeId", "dispatchedAt"], where: "state <> 'ended'" },
    { name: "dispatched_jobs_lost", properties: ["lostAt"], where: "state <> 'ended'" },
  ],
  checks: [
    { name: "dispatched_jobs_state_check", expression: "state in ('dispatched', 'received', 'running', 'ended')" },
  ],
  properties: {
    id: p.text().primary(),
    requestHash: p.text(),
    nodeId: p.text(),
    robotId: p.text(),
    projectId: p.text(),
    subject: p.text(),
    provider: p.text(),
    frame: p.json<Record<string, unknown>>(),
    state: p.text(),
    exit: p.json<Record<string, unknown>>().nullable(),
    stdout: p.text(),
    stderr: p.text(),
    /** Bytes of each stream the device sent (what was captured is the first 64 KiB of them). */
    stdoutBytes: p.integer(),
    stderrBytes: p.integer(),
    outputSeq: p.integer(),
    eventSeq: p.integer(),
    cancelRequested: p.boolean(),
    dispatchedAt: p.datetime(),
    receivedAt: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    lostAt: p.datetime(),
  },
});
export type JobRow = InferEntity<typeof JobRow>;

export const entities = [RobotRow, OperatorRow, DeviceRow, AuditRow, JobRow];
