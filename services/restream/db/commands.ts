import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { WorkerCommandRow } from "./entities.js";

/** A command for the worker generation holding a session (designed: end a session, start or stop an output). */
export interface CommandOrder {
  workerId: string;
  generation: number;
  kind: "end_session" | "start_output" | "stop_output";
  sessionId?: string;
  outputId?: string;
  reason?: string;
}

/** A command taken for delivery. */
export interface TakenCommand {
  seq: string;
  kind: CommandOrder["kind"];
  sessionId: string;
  outputId: string;
  reason: string;
}

/** Queues a command for a worker generation. */
export async function insertCommand(em: EntityManager, order: CommandOrder, at: Date): Promise<void> {
  em.create(WorkerCommandRow, {
    workerId: order.workerId,
    generation: order.generation,
    kind: order.kind,
    sessionId: order.sessionId ?? "",
    outputId: order.outputId ?? "",
    reason: order.reason ?? "",
    createdAt: at,
    deliveredAt: null,
  });
  await em.flush();
}

/**
 * Takes a generation's undelivered commands, oldest first, marking them delivered; a command another stream of the
 * same generation is taking meanwhile is left to it (skip locked), so each goes out once.
 */
export async function takeCommands(
  em: EntityManager,
  workerId: string,
  generation: number,
  at: Date,
  limit = 100,
): Promise<TakenCommand[]> {
  const rows = await sql<{ seq: string; kind: string; session_id: string; output_id: string; reason: string }>(
    em,
    `update {worker_commands} set delivered_at = ?
     where seq in (select seq from {worker_commands} where worker_id = ? and generation = ? and delivered_at is null
       order by seq limit ? for update skip locked)
     returning seq, kind, session_id, output_id, reason`,
    [at, workerId, generation, limit],
  );
  return rows
    .map((row) => ({
      seq: String(row.seq),
      kind: row.kind as TakenCommand["kind"],
      sessionId: row.session_id,
      outputId: row.output_id,
      reason: row.reason,
    }))
    .sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
}
