import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** What a stream does with its sessions (restream.v1.StreamSettings, every field set). */
export interface StoredSettings {
  autoStartOutputs: boolean;
  recording: boolean;
  latencyMode: "normal" | "low";
  maxBitrateKbps: number;
}

/** A stream definition, owned by a person. `archived_at`: set once, and then no ingest and no writes. */
export const StreamRow = defineEntity({
  name: "StreamRow",
  tableName: "streams",
  indexes: [{ name: "streams_by_owner", properties: ["owner", "id"] }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    title: p.text(),
    settings: p.json<StoredSettings>(),
    externalRefs: p.json<Record<string, string>>(),
    archivedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type StreamRow = InferEntity<typeof StreamRow>;

/**
 * An ingest key: its SHA-256 (the worker asks by hash; the key itself is never stored) and its last four characters.
 * `revoked_at`: null while active; in the future during a rotation's grace; past once revoked.
 */
export const IngestKeyRow = defineEntity({
  name: "IngestKeyRow",
  tableName: "ingest_keys",
  uniques: [{ name: "ingest_keys_hash_unique", properties: ["keyHash"] }],
  indexes: [{ name: "ingest_keys_by_stream", properties: ["streamId", "createdAt"] }],
  properties: {
    id: p.text().primary(),
    streamId: p.text(),
    keyHash: p.text(),
    hint: p.text(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});
export type IngestKeyRow = InferEntity<typeof IngestKeyRow>;

/**
 * A destination: its URL (no key in it), its stream key and srt passphrase sealed (kit Sealer), the key's last four
 * characters for the mask. `last_test`: the last test's outcome. `deleted_at`: deleted (its outputs' logs stay).
 */
export const DestinationRow = defineEntity({
  name: "DestinationRow",
  tableName: "destinations",
  indexes: [{ name: "destinations_by_stream", properties: ["streamId", "id"] }],
  properties: {
    id: p.text().primary(),
    streamId: p.text(),
    name: p.text(),
    url: p.text(),
    streamKeySealed: p.text().default(""),
    streamKeyHint: p.text().default(""),
    passphraseSealed: p.text().default(""),
    enabled: p.boolean(),
    lastTest: p.json<{ ok: boolean; reason: string; at: string }>().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});
export type DestinationRow = InferEntity<typeof DestinationRow>;

/**
 * A session: one encoder publishing to a stream through a worker generation. At most one open (starting or live) per
 * stream. `key_id`: the ingest key it was opened with (rotation's end_sessions ends those of the old key).
 */
export const SessionRow = defineEntity({
  name: "SessionRow",
  tableName: "sessions",
  uniques: [{ name: "sessions_one_open", properties: ["streamId"], where: "state in ('starting', 'live')" }],
  indexes: [
    { name: "sessions_by_stream", properties: ["streamId", "id"] },
    { name: "sessions_by_owner", properties: ["owner", "id"] },
    { name: "sessions_by_worker", properties: ["workerId", "state"] },
  ],
  checks: [{ name: "sessions_state_check", expression: "state in ('starting', 'live', 'ended', 'interrupted')" }],
  properties: {
    id: p.text().primary(),
    streamId: p.text(),
    owner: p.text(),
    keyId: p.text(),
    workerId: p.text(),
    generation: p.integer(),
    state: p.text(),
    media: p.json<Record<string, unknown>>().nullable(),
    recording: p.text().default("off"),
    playback: p.json<Record<string, unknown>>().nullable(),
    remoteAddress: p.text().default(""),
    startedAt: p.datetime(),
    liveAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    endReason: p.text().default(""),
  },
});
export type SessionRow = InferEntity<typeof SessionRow>;

/** An output: one destination pushed during one session. At most one running per destination and session. */
export const OutputRow = defineEntity({
  name: "OutputRow",
  tableName: "outputs",
  uniques: [
    {
      name: "outputs_one_running",
      properties: ["destinationId", "sessionId"],
      where: "state in ('starting', 'live', 'reconnecting')",
    },
  ],
  indexes: [
    { name: "outputs_by_session", properties: ["sessionId", "id"] },
    { name: "outputs_by_destination", properties: ["destinationId", "id"] },
  ],
  checks: [
    {
      name: "outputs_state_check",
      expression: "state in ('starting', 'live', 'reconnecting', 'stopped', 'failed')",
    },
  ],
  properties: {
    id: p.text().primary(),
    destinationId: p.text(),
    sessionId: p.text(),
    streamId: p.text(),
    state: p.text(),
    reason: p.text().default(""),
    health: p.json<Record<string, unknown>>().nullable(),
    restarts: p.integer().default(0),
    workerId: p.text(),
    generation: p.integer(),
    startedAt: p.datetime(),
    endedAt: p.datetime().nullable(),
  },
});
export type OutputRow = InferEntity<typeof OutputRow>;

/** A stored log line of an output, already redacted; each output keeps its last PF_RESTREAM_LOG_LINES. */
export const OutputLogRow = defineEntity({
  name: "OutputLogRow",
  tableName: "output_logs",
  indexes: [
    { name: "output_logs_by_output", properties: ["outputId", "seq"] },
    { name: "output_logs_by_destination", properties: ["destinationId", "seq"] },
  ],
  properties: {
    seq: p.bigint().primary().autoincrement(),
    outputId: p.text(),
    destinationId: p.text(),
    at: p.datetime(),
    text: p.text(),
  },
});
export type OutputLogRow = InferEntity<typeof OutputLogRow>;

/** A media worker and its current generation; `lost` once its heartbeats stopped (its sessions interrupted). */
export const WorkerRow = defineEntity({
  name: "WorkerRow",
  tableName: "workers",
  checks: [{ name: "workers_state_check", expression: "state in ('active', 'lost')" }],
  properties: {
    id: p.text().primary(),
    generation: p.integer(),
    state: p.text(),
    ingestUrl: p.text(),
    playbackBase: p.text(),
    registeredAt: p.datetime(),
    lastHeartbeatAt: p.datetime(),
  },
});
export type WorkerRow = InferEntity<typeof WorkerRow>;

/**
 * A command for a worker generation, sent by WatchCommands in order until the worker acknowledges it (its seq as
 * after_seq), then deleted. It names objects only: a start_output's URL and key are unsealed when it is sent, never
 * stored here.
 */
export const WorkerCommandRow = defineEntity({
  name: "WorkerCommandRow",
  tableName: "worker_commands",
  indexes: [{ name: "worker_commands_pending", properties: ["workerId", "generation", "seq"] }],
  checks: [
    { name: "worker_commands_kind_check", expression: "kind in ('end_session', 'start_output', 'stop_output')" },
  ],
  properties: {
    seq: p.bigint().primary().autoincrement(),
    workerId: p.text(),
    generation: p.integer(),
    kind: p.text(),
    sessionId: p.text().default(""),
    outputId: p.text().default(""),
    reason: p.text().default(""),
    createdAt: p.datetime(),
  },
});
export type WorkerCommandRow = InferEntity<typeof WorkerCommandRow>;

export const entities = [
  StreamRow,
  IngestKeyRow,
  DestinationRow,
  SessionRow,
  OutputRow,
  OutputLogRow,
  WorkerRow,
  WorkerCommandRow,
];
