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

/** A command waiting for its worker's acknowledgement. */
export interface PendingCommand {
  seq: bigint;
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
  });
  await em.flush();
}

/** A generation's commands after `afterSeq`, oldest first: sent until the worker acknowledges them. */
export async function commandsAfter(
  em: EntityManager,
  workerId: string,
  generation: number,
  afterSeq: bigint,
  limit = 100,
): Promise<PendingCommand[]> {
  const rows = await sql<{ seq: string; kind: string; session_id: string; output_id: string; reason: string }>(
    em,
    `select seq, kind, session_id, output_id, reason from {worker_commands}
     where worker_id = ? and generation = ? and seq > ? order by seq limit ?`,
    [workerId, generation, afterSeq.toString(), limit],
  );
  return rows.map((row) => ({
    seq: BigInt(row.seq),
    kind: row.kind as PendingCommand["kind"],
    sessionId: row.session_id,
    outputId: row.output_id,
    reason: row.reason,
  }));
}

/** Deletes the commands a generation acknowledged (`seq <= afterSeq`): carried out, never sent again. */
export async function acknowledgeCommands(
  em: EntityManager,
  workerId: string,
  generation: number,
  afterSeq: bigint,
): Promise<void> {
  if (afterSeq === 0n) return;
  await sql(em, `delete from {worker_commands} where worker_id = ? and generation = ? and seq <= ?`, [
    workerId,
    generation,
    afterSeq.toString(),
  ]);
}

/** Deletes the commands of a worker's generations before `generation`: fenced, they are never sent. */
export async function dropEarlierCommands(em: EntityManager, workerId: string, generation: number): Promise<void> {
  await sql(em, `delete from {worker_commands} where worker_id = ? and generation < ?`, [workerId, generation]);
}
