import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { OutputSchema, type Output } from "../../../gen/pf/restream/v1/destinations_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { RUNNING_STATES } from "../domain/output-states.js";
import type { Reach } from "../owners.js";
import { OutputRow } from "./entities.js";
import { sessionWithin } from "./sessions.js";

/** 404 restream.output.not_found: an output missing, or beyond the caller's reach. */
export const outputNotFound = (id: string) => problem(404, "restream.output.not_found", `No output ${id}.`);

/** What an output's health holds: FFmpeg's last progress and when the worker reported it. */
export interface StoredHealth {
  frames: number;
  fps: number;
  bitrateKbps: number;
  outTimeMs: number;
  speed: number;
  reportedAt: string;
}

const locked = (lock: boolean) => (lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true });

/** An output, locked for the transaction when `lock`. */
export function findOutput(em: EntityManager, id: string, lock = false): Promise<OutputRow | null> {
  return em.findOne(OutputRow, { id }, locked(lock));
}

/** An output within the call's reach (its session's), else 404 restream.output.not_found, as a missing one. */
export async function outputWithin(em: EntityManager, id: string, reach: Reach): Promise<OutputRow> {
  const output = await findOutput(em, id);
  if (!output) throw outputNotFound(id);
  await sessionWithin(em, output.sessionId, reach).catch(() => {
    throw outputNotFound(id);
  });
  return output;
}

/** The running output (starting, live or reconnecting) of a destination in a session, if any. */
export function runningOutput(
  em: EntityManager,
  destinationId: string,
  sessionId: string,
  lock = false,
): Promise<OutputRow | null> {
  return em.findOne(OutputRow, { destinationId, sessionId, state: { $in: [...RUNNING_STATES] } }, locked(lock));
}

/** The running outputs of a session or of a destination, locked for the transaction. */
export function runningOutputsOf(
  em: EntityManager,
  of: { sessionId: string } | { destinationId: string },
): Promise<OutputRow[]> {
  return em.find(
    OutputRow,
    { ...of, state: { $in: [...RUNNING_STATES] } },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { id: "asc" } },
  );
}

/** The latest output of a destination in a session (what a stop answers when nothing runs). */
export function latestOutput(em: EntityManager, destinationId: string, sessionId: string): Promise<OutputRow | null> {
  return em.findOne(OutputRow, { destinationId, sessionId }, { orderBy: { id: "desc" }, refresh: true });
}

/** A session's outputs, oldest first. */
export function outputsOfSession(em: EntityManager, sessionId: string): Promise<OutputRow[]> {
  return em.find(OutputRow, { sessionId }, { orderBy: { id: "asc" } });
}

/** Stores a new output. */
export async function insertOutput(em: EntityManager, data: RequiredEntityData<OutputRow>): Promise<OutputRow> {
  const row = em.create(OutputRow, data);
  await em.flush();
  return row;
}

/** Writes the changes made to output rows. */
export async function saveOutputs(em: EntityManager): Promise<void> {
  await em.flush();
}

/** An output as reads answer it. */
export function outputToProto(row: OutputRow): Output {
  const health = row.health as StoredHealth | null;
  return create(OutputSchema, {
    id: row.id,
    destinationId: row.destinationId,
    sessionId: row.sessionId,
    streamId: row.streamId,
    state: row.state,
    reason: row.reason,
    health: health
      ? {
          frames: BigInt(health.frames),
          fps: health.fps,
          bitrateKbps: health.bitrateKbps,
          outTimeMs: BigInt(health.outTimeMs),
          speed: health.speed,
          reportedAt: timestampFromDate(new Date(health.reportedAt)),
        }
      : undefined,
    restarts: row.restarts,
    workerId: row.workerId,
    generation: row.generation,
    startedAt: timestampFromDate(row.startedAt),
    endedAt: row.endedAt ? timestampFromDate(row.endedAt) : undefined,
  });
}
