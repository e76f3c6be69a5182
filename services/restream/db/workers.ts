import { isFenced } from "../domain/sessions.js";
import { problem } from "../../kit/handler/problem.js";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { WorkerSchema, type Worker } from "../../../gen/pf/restream/v1/sessions_pb.js";
import { sql } from "../../kit/db/sql.js";
import type { RestreamSettings } from "../settings.js";
import { WorkerRow } from "./entities.js";

/**
 * Registers a worker: a new one at generation 1, a known one at one more than its last (which fences the earlier
 * generation), active, heard from now. Takes the worker's row lock to the end of the transaction.
 */
export async function registerWorker(
  em: EntityManager,
  worker: { id: string; ingestUrl: string; playbackBase: string; at: Date },
): Promise<number> {
  const [row] = await sql<{ generation: number }>(
    em,
    `insert into {workers} as w (id, generation, state, ingest_url, playback_base, registered_at, last_heartbeat_at)
     values (?, 1, 'active', ?, ?, ?, ?)
     on conflict (id) do update set generation = w.generation + 1, state = 'active', ingest_url = excluded.ingest_url,
       playback_base = excluded.playback_base, registered_at = excluded.registered_at,
       last_heartbeat_at = excluded.last_heartbeat_at
     returning generation`,
    [worker.id, worker.ingestUrl, worker.playbackBase, worker.at, worker.at],
  );
  return row!.generation;
}

/**
 * A worker by its id, read afresh. `share` holds its generation still to the end of the transaction (a report or an
 * authorisation against a registration); `update` locks it for a change (the liveness sweep).
 */
export async function workerById(
  em: EntityManager,
  id: string,
  lock?: "share" | "update",
): Promise<WorkerRow | undefined> {
  const lockMode =
    lock === "share" ? LockMode.PESSIMISTIC_READ : lock === "update" ? LockMode.PESSIMISTIC_WRITE : undefined;
  return (await em.findOne(WorkerRow, { id }, { refresh: true, ...(lockMode ? { lockMode } : {}) })) ?? undefined;
}

/** Records a heartbeat of the worker's current, active generation; false when that generation is fenced. */
export async function recordHeartbeat(em: EntityManager, id: string, generation: number, at: Date): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `update {workers} set last_heartbeat_at = ? where id = ? and generation = ? and state = 'active' returning id`,
    [at, id, generation],
  );
  return rows.length > 0;
}

/** The active workers not heard from since `before`: the liveness sweep's candidates. */
export async function silentWorkers(em: EntityManager, before: Date): Promise<WorkerRow[]> {
  return em.find(WorkerRow, { state: "active", lastHeartbeatAt: { $lt: before } }, { refresh: true });
}

/** Marks a worker lost (the caller holds its row lock). */
export async function markLost(em: EntityManager, row: WorkerRow): Promise<void> {
  row.state = "lost";
  await em.flush();
}

/** Every worker with the count of the sessions it holds open, by id. */
export async function workerViews(em: EntityManager): Promise<Worker[]> {
  const rows = await sql<{
    id: string;
    generation: number;
    state: string;
    ingest_url: string;
    registered_at: string | Date;
    last_heartbeat_at: string | Date;
    open_sessions: number;
  }>(
    em,
    `select w.id, w.generation, w.state, w.ingest_url, w.registered_at, w.last_heartbeat_at,
       (select count(*)::int from {sessions} s where s.worker_id = w.id and s.state in ('starting', 'live'))
         as open_sessions
     from {workers} w order by w.id`,
  );
  return rows.map((row) =>
    create(WorkerSchema, {
      id: row.id,
      generation: row.generation,
      state: row.state,
      ingestUrl: row.ingest_url,
      registeredAt: timestampFromDate(new Date(row.registered_at)),
      lastHeartbeatAt: timestampFromDate(new Date(row.last_heartbeat_at)),
      openSessions: row.open_sessions,
    }),
  );
}

/**
 * Where encoders publish, the key appended: PF_RESTREAM_PUBLIC_INGEST_URL when set, else the embedded worker's own
 * ingest URL as it registered, else the one its settings would give it.
 */
export async function ingestUrls(em: EntityManager, settings: RestreamSettings): Promise<string[]> {
  if (settings.publicIngestUrl !== "") return [settings.publicIngestUrl];
  const embedded = settings.embeddedWorker ? await workerById(em, settings.workerId) : undefined;
  if (embedded && embedded.ingestUrl !== "") return [embedded.ingestUrl];
  const host = settings.rtmpBind.includes(":") ? `[${settings.rtmpBind}]` : settings.rtmpBind;
  return [`rtmp://${host}:${settings.rtmpPort}/live`];
}

/** 409 restream.worker_fenced: a call of a generation that is not the worker's current, active one. */
export function fenced(workerId: string, generation: number) {
  return problem(
    409,
    "restream.worker_fenced",
    `Generation ${generation} of worker ${workerId} is fenced: another registered, or it was lost. Register again.`,
  );
}

/** Holds the worker's generation still to the end of the transaction (share lock), or refuses an old one. */
export async function currentGeneration(em: EntityManager, workerId: string, generation: number): Promise<void> {
  const worker = await workerById(em, workerId, "share");
  if (isFenced(worker, generation)) throw fenced(workerId, generation);
}
