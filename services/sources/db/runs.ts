import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import {
  FailureClass,
  type FetchRun,
  FetchRunSchema,
  RunState,
  RunTrigger,
} from "../../../gen/pf/sources/v1/runs_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { FetchRunRow } from "./entities.js";
import { enumOf } from "./enums.js";

/** The states a run is still active in: one per source at a time (fetch_runs_one_active). */
const ACTIVE = ["queued", "running"];

/** The queued or running run of a source, if any. */
export const activeRun = (em: EntityManager, sourceKey: string) =>
  em.findOne(FetchRunRow, { sourceKey, state: { $in: ACTIVE } });

/** Queues a run (a manual trigger; the scheduler queues many with `queueDue`), written at once. */
export async function queueRun(
  em: EntityManager,
  sourceKey: string,
  trigger: "schedule" | "manual",
  at: Date,
): Promise<FetchRunRow> {
  const row = em.create(FetchRunRow, {
    id: newId("run"),
    sourceKey,
    state: "queued",
    failureDetail: "",
    trigger,
    queuedAt: at,
    bytes: 0n,
    itemsNew: 0,
    itemsRevised: 0,
    itemsUnchanged: 0,
    itemsSkippedRemoved: 0,
    entriesSkipped: 0,
  });
  await em.flush();
  return row;
}

/** Writes a run's end and its source's health, as changed on their rows, in the caller's transaction. */
export async function writeRunEnd(em: EntityManager): Promise<void> {
  await em.flush();
}

/**
 * Queues a scheduled run for every enabled fetched source that is due and has none active, and moves each one's
 * next fetch an interval on. Answers how many were queued.
 */
export async function queueDue(em: EntityManager, at: Date, limit: number): Promise<number> {
  const due = await sql<{ key: string }>(
    em,
    `update {sources} set next_fetch_at = ?::timestamptz + fetch_interval_seconds * interval '1 second'
     where key in (
       select key from {sources}
       where enabled and kind <> 'manual' and (next_fetch_at is null or next_fetch_at <= ?)
       order by next_fetch_at nulls first limit ? for update skip locked)
     returning key`,
    [at, at, limit],
  );
  if (due.length === 0) return 0;
  const rows = due.map(({ key }) => [newId("run"), key, at]);
  const queued = await sql<{ id: string }>(
    em,
    `insert into {fetch_runs} (id, source_key, state, failure_detail, trigger, queued_at, bytes,
       items_new, items_revised, items_unchanged, items_skipped_removed, entries_skipped)
     values ${rows.map(() => "(?, ?, 'queued', '', 'schedule', ?, 0, 0, 0, 0, 0, 0)").join(", ")}
     on conflict (source_key) where state in ('queued', 'running') do nothing returning id`,
    rows.flat(),
  );
  return queued.length;
}

/** A run claimed by a worker, with what it needs to fetch. */
export interface ClaimedRun {
  id: string;
  sourceKey: string;
}

/**
 * Claims the oldest queued run of an enabled source whose host may be requested now (per-host politeness): the run
 * rows are taken `for update skip locked`, so instances never claim one twice, and the host's next turn is moved
 * `gapMs` on in the same statement that checks it (its row lock orders claimers of one host). `sourceKey` claims only
 * that source's run (a test driving one source).
 */
export async function claimRun(
  em: EntityManager,
  worker: string,
  at: Date,
  leaseMs: number,
  gapMs: number,
  sourceKey?: string,
): Promise<ClaimedRun | undefined> {
  const candidates = await sql<{ id: string; source_key: string; host: string }>(
    em,
    `select r.id, r.source_key, s.host from {fetch_runs} r
     join {sources} s on s.key = r.source_key
     where r.state = 'queued' and s.enabled and s.host is not null ${sourceKey ? "and r.source_key = ?" : ""}
     order by r.queued_at, r.id limit 20 for update of r skip locked`,
    sourceKey ? [sourceKey] : [],
  );
  for (const candidate of candidates) {
    const turn = await sql<{ host: string }>(
      em,
      `insert into {host_turns} (host, next_at) values (?, ?) on conflict (host)
       do update set next_at = excluded.next_at where {host_turns}.next_at <= ? returning host`,
      [candidate.host, new Date(at.getTime() + gapMs), at],
    );
    if (turn.length === 0) continue;
    await sql(
      em,
      `update {fetch_runs} set state = 'running', started_at = ?, lease_until = ?, worker = ? where id = ?`,
      [at, new Date(at.getTime() + leaseMs), worker, candidate.id],
    );
    return { id: candidate.id, sourceKey: candidate.source_key };
  }
  return undefined;
}

/** Renews a running run's lease while its worker fetches; false once it is no longer this worker's. */
export async function renewRun(em: EntityManager, id: string, worker: string, until: Date): Promise<boolean> {
  const renewed = await sql<{ id: string }>(
    em,
    `update {fetch_runs} set lease_until = ? where id = ? and worker = ? and state = 'running' returning id`,
    [until, id, worker],
  );
  return renewed.length > 0;
}

/** The run, locked, if this worker still holds it running (the reaper may have ended it meanwhile). */
export const heldRun = (em: EntityManager, id: string, worker: string) =>
  em.findOne(FetchRunRow, { id, worker, state: "running" }, { lockMode: LockMode.PESSIMISTIC_WRITE });

/** Running runs whose lease lapsed as of `at` (their worker died), oldest lease first. */
export const lapsedRuns = (em: EntityManager, at: Date, limit: number) =>
  em.find(FetchRunRow, { state: "running", leaseUntil: { $lt: at } }, { orderBy: { leaseUntil: "asc" }, limit });

/** The run, locked, if it is still running with its lease lapsed as of `at` (its worker did not come back). */
export const lapsedRun = (em: EntityManager, id: string, at: Date) =>
  em.findOne(FetchRunRow, { id, state: "running", leaseUntil: { $lt: at } }, { lockMode: LockMode.PESSIMISTIC_WRITE });

/** Runs newest first, of one source or all, in one state or all, after the cursor's (queued_at, id). */
export function runsPage(
  em: EntityManager,
  filter: { sourceKey?: string; state?: string; before?: [string, string] },
  limit: number,
): Promise<FetchRunRow[]> {
  const before = filter.before;
  return em.find(
    FetchRunRow,
    {
      ...(filter.sourceKey ? { sourceKey: filter.sourceKey } : {}),
      ...(filter.state ? { state: filter.state } : {}),
      ...(before
        ? {
            $or: [
              { queuedAt: { $lt: new Date(before[0]) } },
              { queuedAt: new Date(before[0]), id: { $lt: before[1] } },
            ],
          }
        : {}),
    },
    { orderBy: { queuedAt: "desc", id: "desc" }, limit: limit + 1 },
  );
}

/** The cursor position of a run in `runsPage`'s order. */
export const runPosition = (row: FetchRunRow) => [row.queuedAt.toISOString(), row.id];

export function runToProto(row: FetchRunRow): FetchRun {
  return create(FetchRunSchema, {
    id: row.id,
    sourceKey: row.sourceKey,
    state: enumOf(RunState, row.state),
    failureClass: enumOf(FailureClass, row.failureClass),
    failureDetail: row.failureDetail,
    trigger: enumOf(RunTrigger, row.trigger),
    queuedAt: timestampFromDate(row.queuedAt),
    startedAt: row.startedAt ? timestampFromDate(row.startedAt) : undefined,
    finishedAt: row.finishedAt ? timestampFromDate(row.finishedAt) : undefined,
    httpStatus: row.httpStatus ?? 0,
    bytes: BigInt(row.bytes),
    itemsNew: row.itemsNew,
    itemsRevised: row.itemsRevised,
    itemsUnchanged: row.itemsUnchanged,
    itemsSkippedRemoved: row.itemsSkippedRemoved,
    entriesSkipped: row.entriesSkipped,
  });
}
