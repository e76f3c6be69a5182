import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  JobOutputChunkSchema,
  JobStateChangeSchema,
  JobStreamEventSchema,
  type JobStreamEvent,
} from "../../../gen/pf/run/v1/jobs_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { sql } from "../../kit/db/sql.js";
import { JobStreamEventRow, StreamTicketRow, type JobRow } from "./entities.js";

/** A persisted stream event as a hot read answers it. */
export interface StoredStreamEvent {
  seq: number;
  at: Date | string;
  kind: string;
  body: Record<string, unknown>;
}

const eventsPage = new HotRead<StoredStreamEvent, [string, number, number]>(
  "stream.events_after",
  `select seq, at, kind, body from {job_stream_events} where job_id = $1 and seq > $2 order by seq limit $3`,
);

/** Up to `limit` of a job's stream events after `after`, in order (a hot read: open streams read them). */
export function streamEventsAfter(
  ctx: ReadContext,
  jobId: string,
  after: number,
  limit: number,
): Promise<StoredStreamEvent[]> {
  return eventsPage.run(ctx, jobId, after, limit);
}

/**
 * Persists an event of a job's stream as its next (`seq`, returned) together with the job's changes, under the job's
 * lock: written with the transaction's next flush, with the job's other changes of the same event.
 */
export function appendStreamEvent(
  em: EntityManager,
  job: JobRow,
  changes: Partial<JobRow>,
  event: Pick<JobStreamEventRow, "at" | "kind" | "body">,
): number {
  const seq = job.lastSeq + 1;
  em.assign(job, { ...changes, lastSeq: seq });
  em.create(JobStreamEventRow, { ...event, jobId: job.id, seq });
  return seq;
}

/** Stores a minted ticket (only its hash). */
export async function insertTicket(em: EntityManager, ticket: StreamTicketRow): Promise<void> {
  em.create(StreamTicketRow, ticket);
  await em.flush();
}

/**
 * Uses a ticket once, atomically across instances (one statement: of two concurrent uses one finds it used): only
 * an unused, unexpired ticket of this job, and of this minter when the opener shows a token. Answers whether it was.
 */
export async function useTicket(
  em: EntityManager,
  ticket: { hash: string; jobId: string; minter: string | undefined; at: Date },
): Promise<boolean> {
  const used = await sql<{ hash: string }>(
    em,
    `update {stream_tickets} set used_at = ?
      where hash = ? and job_id = ? and used_at is null and expires_at > ? and (?::text is null or minter = ?)
      returning hash`,
    [ticket.at, ticket.hash, ticket.jobId, ticket.at, ticket.minter ?? null, ticket.minter ?? null],
  );
  return used.length > 0;
}

/** Forgets tickets that expired before `before` (used or not: either way they open nothing). */
export async function dropExpiredTickets(em: EntityManager, before: Date): Promise<void> {
  await sql(em, `delete from {stream_tickets} where expires_at < ?`, [before]);
}

/** A persisted stream event as the stream sends it: its seq is its SSE id. */
export function streamEventToProto(stored: StoredStreamEvent): JobStreamEvent {
  const body = stored.body as JsonObject;
  return create(JobStreamEventSchema, {
    id: String(stored.seq),
    at: timestampFromDate(new Date(stored.at)),
    event:
      stored.kind === "output"
        ? { case: "output", value: fromJson(JobOutputChunkSchema, body) }
        : { case: "state", value: fromJson(JobStateChangeSchema, body) },
  });
}
